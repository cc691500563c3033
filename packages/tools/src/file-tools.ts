import { FsError, type FsTarget, type PolicyOwner } from '@seamfs/core'
import { argsParser, NON_BLANK } from './args.js'
import { messagePath, quotePath } from './quote.js'
import { LineWindow, readFooter, type ReadLine } from './read-window.js'
import { failure, ok, ToolInputError, withEditWording, withRemedy } from './results.js'
import type { FileTool, ToolContext, ToolDeps, ToolResult } from './types.js'

/** Canonical value of `read`. */
export interface ReadValue {
  readonly path: string
  readonly offset: number
  readonly lines: ReadLine[]
  readonly totalLines: number
}

/** Canonical value of `write`. */
export interface WriteValue {
  readonly path: string
  readonly operation: 'create' | 'update'
  readonly before: string | null
  readonly after: string
}

/** Canonical value of `edit`. */
export interface EditValue {
  readonly path: string
  readonly before: string
  readonly after: string
}

/** Whose observations a call reads and records: the call's own session, else the tools instance's default one. */
export function sessionOf(deps: ToolDeps, context: ToolContext): PolicyOwner {
  return context.session ?? deps.session
}

export function resolveIn(deps: ToolDeps, path: string, context: ToolContext): Promise<FsTarget> {
  return deps.fs.resolve(path, { cwd: context.cwd ?? deps.cwd, signal: context.signal })
}

/** Runs a tool body; every failure, whatever it is, becomes an `isError` result. */
export async function run<V>(body: () => Promise<ToolResult<V>>): Promise<ToolResult<V>> {
  try {
    return await body()
  } catch (err) {
    return failure(err)
  }
}

/** Runs a mutation; its refusal (from the policy too) is restated for the model: a remedy, the tool's argument names. */
async function remedied<T>(mutation: () => Promise<T>, restate: (err: unknown) => unknown = withRemedy): Promise<T> {
  try {
    return await mutation()
  } catch (err) {
    throw restate(err)
  }
}

const mutating = { readOnlyHint: false, openWorldHint: false } as const

export function readTool(deps: ToolDeps): FileTool<ReadValue> {
  const { config } = deps
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to read, resolved by the filesystem backend.' },
      offset: { type: ['integer', 'null'], minimum: 1, description: '1-based first line to return. Defaults to 1.' },
      limit: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: config.readLimit,
        description: `Maximum number of lines to return. Defaults to ${config.readLimit}.`,
      },
    },
    required: ['file_path'],
    additionalProperties: false,
  }
  const parse = argsParser(inputSchema)
  return {
    name: 'read',
    description: 'Read a UTF-8 text file and return line-numbered content.',
    inputSchema,
    annotations: { title: 'Read file', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files.',
    execute: (args, context = {}) =>
      run(async () => {
        const a = parse(args)
        const filePath = a.string('file_path')
        const offset = a.integer('offset', 1)
        const limit = a.integer('limit', config.readLimit)
        const target = await resolveIn(deps, filePath, context)
        const shown = quotePath(target.displayPath)
        const session = sessionOf(deps, context)
        const info = await deps.fs.stat(target, { signal: context.signal })
        if (info === undefined) {
          deps.policy?.recordAbsent(session, target)
          // Core's shape, path raw: `failure` quotes it, as every filesystem message.
          throw FsError.notFound('read', target.displayPath)
        }
        if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
        const window = new LineWindow({ offset, limit, maxLineLength: config.readMaxLineLength, maxBytes: config.readMaxBytes })
        if (info.size === undefined || info.size >= config.readStreamMinSize) {
          for await (const chunk of await deps.fs.streamText(target, { signal: context.signal })) window.push(chunk)
        } else {
          window.push(await deps.fs.readText(target, { signal: context.signal }))
        }
        const result = window.end()
        const emptyFileStart = offset === 1 && result.totalLines === 0
        if (offset > result.totalLines && !emptyFileStart && !result.truncatedByBytes) {
          throw new FsError('FS_NOT_FOUND', `offset ${offset} is out of range for ${messagePath(target.displayPath)} (${result.totalLines} lines)`)
        }
        deps.policy?.recordPresent(session, target, info.version)
        const body = result.lines.map((line) => `${line.number}: ${line.text}`)
        const footer = readFooter(offset, result)
        const content = body.length === 0 ? footer : `${body.join('\n')}\n\n${footer}`
        const text = `<path>${shown}</path>\n<type>file</type>\n<content>\n${content}\n</content>`
        return ok(text, { path: target.displayPath, offset, lines: result.lines, totalLines: result.totalLines })
      }),
  }
}

export function writeTool(deps: ToolDeps): FileTool<WriteValue> {
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to write, resolved by the filesystem backend.' },
      content: { type: 'string', description: 'Full UTF-8 text content to write.' },
    },
    required: ['file_path', 'content'],
    additionalProperties: false,
  }
  const parse = argsParser(inputSchema)
  return {
    name: 'write',
    description: 'Create or fully replace a UTF-8 text file.',
    inputSchema,
    annotations: { title: 'Write file', destructiveHint: true, idempotentHint: true, ...mutating },
    prompt:
      'Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default read-before-write policy requires it) and prefer edit for targeted changes.',
    execute: (args, context = {}) =>
      run(async () => {
        const a = parse(args)
        const filePath = a.string('file_path')
        const content = a.string('content')
        const target = await resolveIn(deps, filePath, context)
        const session = sessionOf(deps, context)
        const expected = deps.policy?.writeIntent(session, target)
        const outcome = await remedied(() => deps.fs.writeText(target, content, { expected, signal: context.signal }))
        deps.policy?.recordPresent(session, target, outcome.version)
        const shown = quotePath(target.displayPath)
        const verb = outcome.operation === 'create' ? 'Created file' : 'Updated file'
        return ok(`<path>${shown}</path>\n<type>file</type>\n<content>\n${verb}\n</content>`, {
          path: target.displayPath,
          operation: outcome.operation,
          before: outcome.before,
          after: outcome.after,
        })
      }),
  }
}

export function editTool(deps: ToolDeps): FileTool<EditValue> {
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to edit, resolved by the filesystem backend.' },
      old_string: { type: 'string', minLength: 1, description: 'Literal text to replace. Must match exactly.' },
      new_string: { type: 'string', description: 'Literal replacement text. Use an empty string to delete the match.' },
      replace_all: {
        type: ['boolean', 'null'],
        description: 'Replace all matches. Defaults to false; when false, old_string must appear exactly once.',
      },
    },
    required: ['file_path', 'old_string', 'new_string'],
    additionalProperties: false,
  }
  const parse = argsParser(inputSchema)
  return {
    name: 'edit',
    description: 'Replace literal text in an existing UTF-8 text file.',
    inputSchema,
    annotations: { title: 'Edit file', destructiveHint: true, idempotentHint: false, ...mutating },
    prompt:
      'Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. Read the file first (the default read-before-write policy requires it), unless you just created or edited it in this session.',
    execute: (args, context = {}) =>
      run(async () => {
        const a = parse(args)
        const filePath = a.string('file_path')
        const oldString = a.string('old_string')
        const newString = a.string('new_string')
        if (oldString === newString) throw new ToolInputError('old_string and new_string must differ')
        const replaceAll = a.boolean('replace_all', false)
        const target = await resolveIn(deps, filePath, context)
        const session = sessionOf(deps, context)
        const outcome = await remedied(
          () => {
            const expected = deps.policy?.editIntent(session, target)
            return deps.fs.editText(target, { oldString, newString, replaceAll }, { expected, signal: context.signal })
          },
          (err) => withEditWording(err, target.displayPath),
        )
        deps.policy?.recordPresent(session, target, outcome.version)
        const shown = quotePath(target.displayPath)
        const text = replaceAll
          ? `The file ${shown} has been updated. All occurrences were successfully replaced.`
          : `The file ${shown} has been updated successfully.`
        return ok(text, { path: target.displayPath, before: outcome.before, after: outcome.after })
      }),
  }
}
