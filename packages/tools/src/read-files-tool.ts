import { FsError, type FsErrorCode } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { quotePath } from './quote.js'
import { readStructured, readTool, type ReadValue } from './read-tool.js'
import { ok } from './results.js'
import { COUNT, NULLABLE_STRING, object, STRING } from './structured.js'
import { run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps, ToolResult, ToolsConfig } from './types.js'

/** The most files one `read_files` call reads. */
export const READ_FILES_MAX = 20

/** How many times `readMaxBytes` the windows of one `read_files` call may hold in all. */
export const READ_FILES_BUDGET_FACTOR = 2

/** One file of a `read_files` call: `read`'s value, or `read`'s failure, in the place the call named it. */
export interface ReadFilesItem {
  /** The path as the call gave it. */
  readonly filePath: string
  /** What `read` returns for it; undefined when the read failed. */
  readonly value?: ReadValue | undefined
  /** The failure as `read` reports it (`Error: …` and its code); undefined when the read succeeded. */
  readonly error?: { readonly text: string; readonly code: FsErrorCode | undefined } | undefined
}

/** Canonical value of `read_files`: every file in the order the call named them. */
export interface ReadFilesValue {
  readonly files: readonly ReadFilesItem[]
  /** How many of them failed. */
  readonly failed: number
}

/** The checked arguments of `read_files`, defaults filled in. */
export interface ReadFilesArgs {
  readonly filePaths: readonly string[]
  /** Lines per file (default and maximum `readLimit`). */
  readonly limit: number
}

const readItem = readStructured.schema as Readonly<{ properties: Record<string, unknown>; required: readonly string[] }>

export const readFilesStructured: StructuredOutput<ReadFilesValue> = {
  schema: object({
    files: {
      type: 'array',
      items: {
        anyOf: [
          // A file read: what `read` gives, and the path as the call named it.
          { ...readItem, properties: { file_path: STRING, ...readItem.properties }, required: ['file_path', ...readItem.required] },
          object({ file_path: STRING, error: STRING, code: NULLABLE_STRING }),
        ],
      },
    },
    failed: COUNT,
  }),
  content: (v) => ({
    files: v.files.map((f) =>
      f.value === undefined
        ? { file_path: f.filePath, error: f.error?.text ?? '', code: f.error?.code ?? null }
        : { file_path: f.filePath, ...readStructured.content(f.value) },
    ),
    failed: v.failed,
  }),
}

export function readFilesInput(config: ToolsConfig): ToolInput<ReadFilesArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      file_paths: {
        type: 'array',
        minItems: 1,
        maxItems: READ_FILES_MAX,
        items: { type: 'string', pattern: NON_BLANK },
        description: `Paths of the files to read (1 to ${READ_FILES_MAX}), resolved by the filesystem backend.`,
      },
      limit: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: config.readLimit,
        description: `Maximum number of lines to return of each file. Defaults to ${config.readLimit}.`,
      },
    },
    required: ['file_paths'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): ReadFilesArgs => ({ filePaths: a.strings('file_paths'), limit: a.integer('limit', config.readLimit) }))
}

/** The block of one file: `read`'s envelope; an image is described, not returned (a result carries one image); a failure in an envelope of its own. */
function block(item: ReadFilesItem, result: ToolResult<ReadValue>): string {
  const image = item.value?.image
  if (image !== undefined) {
    const content = `(${image.mimeType}, ${image.size} bytes; not shown here: use the read tool to see the image)`
    return `<path>${quotePath(item.value?.path ?? item.filePath)}</path>\n<type>image</type>\n<content>\n${content}\n</content>`
  }
  if (item.error === undefined) return result.text
  return `<path>${quotePath(item.filePath)}</path>\n<type>error</type>\n<content>\n${item.error.text}\n</content>`
}

function footer(value: ReadFilesValue): string {
  const count = value.files.length
  const failed = value.failed === 0 ? '' : `, ${value.failed} failed`
  return `(${count} ${count === 1 ? 'file' : 'files'}: ${count - value.failed} read${failed})`
}

/**
 * The `read_files` tool: several files in one call, each read by the `read` tool itself (so each
 * gets `read`'s envelope, caps and errors, and each read is recorded in the policy as `read`
 * records it), one after the other. A failure takes the place of its file; the others are read.
 * The windows share a budget of {@link READ_FILES_BUDGET_FACTOR} × `readMaxBytes` UTF-8 bytes: each
 * file gets at most `readMaxBytes`, and at most an equal share of what the files before it left.
 */
export function readFilesTool(deps: ToolDeps): FileTool<ReadFilesValue> {
  const { config } = deps
  const { inputSchema, parse } = readFilesInput(config)
  const budget = READ_FILES_BUDGET_FACTOR * config.readMaxBytes
  // `read` with the window this file may have (building one costs far less than the read itself).
  const readerFor = (maxBytes: number): FileTool<ReadValue> => readTool({ ...deps, config: { ...config, readMaxBytes: maxBytes } })
  return {
    name: 'read_files',
    description: `Read several UTF-8 text files (up to ${READ_FILES_MAX}) in one call; each comes back as the read tool returns it, a failure in its place.`,
    inputSchema,
    structured: readFilesStructured,
    annotations: { title: 'Read files', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: `Use the read_files tool to read several files you already know you need in one call instead of one read call each. Each file comes back in its own envelope with line numbers, as the read tool gives it; a file that cannot be read shows its error in its place and the others are still read. The files share one output budget, so a long file may be cut: continue it with the read tool and the offset its footer names. Images are not shown here: use the read tool for them.`,
    execute: (args, context = {}) =>
      run(async () => {
        const { filePaths, limit } = parse(args)
        const signal = context.signal
        const files: ReadFilesItem[] = []
        const blocks: string[] = []
        let left = budget
        for (const [i, filePath] of filePaths.entries()) {
          const share = Math.max(1, Math.min(config.readMaxBytes, Math.floor(left / (filePaths.length - i))))
          const result = await readerFor(share).execute({ file_path: filePath, limit }, context)
          // Aborted (by the caller or the call's deadline): the call fails, rather than list every later file as aborted.
          if (signal?.aborted === true) throw FsError.aborted('read', signal.reason, { path: filePath })
          const item: ReadFilesItem = result.isError ? { filePath, error: { text: result.text, code: result.code } } : { filePath, value: result.value }
          const shown = block(item, result)
          left -= item.value === undefined || item.value.image !== undefined ? 0 : Buffer.byteLength(item.value.lines.map((l) => l.text).join('\n'))
          files.push(item)
          blocks.push(shown)
        }
        const value: ReadFilesValue = { files, failed: files.filter((f) => f.value === undefined).length }
        return ok(`${blocks.join('\n\n')}\n\n${footer(value)}`, value)
      }, 'read'),
  }
}
