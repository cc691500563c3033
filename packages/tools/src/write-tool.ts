import type { FsWriteOutcome } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { changeDiffAsync, diffOutcome } from './diff.js'
import { previewWrite } from './dry-run.js'
import { quotePath } from './quote.js'
import { ok } from './results.js'
import { BOOLEAN, NULLABLE_STRING, object, STRING } from './structured.js'
import { mutating, remedied, resolveIn, run, sessionOf, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** Canonical value of `write`. */
export interface WriteValue {
  readonly path: string
  readonly operation: 'create' | 'update'
  /**
   * The previous text (LF-normalized, without BOM); `null` for a create, or when it was not text or
   * too large to decode. After a write it is built when first read (an enumerable accessor, so a
   * spread or `JSON.stringify` still sees it): a caller that reads only the diff never decodes it.
   */
  readonly before: string | null
  readonly after: string
  /**
   * The bounded unified diff the model read after the success line; `null` for a create (the model
   * wrote every line itself) and when `before` is `null`.
   */
  readonly diff: string | null
  /** True when nothing was written (`dryRun`). */
  readonly dryRun: boolean
}

/** The checked arguments of `write`, defaults filled in. */
export interface WriteArgs {
  readonly filePath: string
  readonly content: string
  /** Default false. */
  readonly dryRun: boolean
}

export const writeStructured: StructuredOutput<WriteValue> = {
  schema: object({ path: STRING, operation: { type: 'string', enum: ['create', 'update'] }, diff: NULLABLE_STRING, dryRun: BOOLEAN }),
  content: (v) => ({ path: v.path, operation: v.operation, diff: v.diff, dryRun: v.dryRun }),
}

/** Whether a write's outcome has a previous text, told without building it (core makes a large one an accessor, decoded when read). */
function hasBefore(outcome: FsWriteOutcome): boolean {
  const own = Object.getOwnPropertyDescriptor(outcome, 'before')
  return own === undefined || own.get !== undefined || own.value !== null
}

const lineCount = (text: string): number => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0))

/** The envelope's content: the verb, then the diff (or, where there is none, why). */
function contentOf(verb: string, value: WriteValue): string {
  if (value.diff !== null) return `${verb}\n\n${value.diff}`
  if (value.operation === 'update') return `${verb}\n\n(No diff: the previous content was not text, or too large to compare.)`
  return value.dryRun ? `${verb} (${lineCount(value.after)} lines)` : verb
}

export function writeInput(): ToolInput<WriteArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to write, resolved by the filesystem backend.' },
      content: { type: 'string', description: 'Full UTF-8 text content to write.' },
      dryRun: {
        type: ['boolean', 'null'],
        description: 'Return what the write would change (a diff for an existing file) and write nothing. Defaults to false.',
      },
    },
    required: ['file_path', 'content'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): WriteArgs => ({ filePath: a.string('file_path'), content: a.string('content'), dryRun: a.boolean('dryRun', false) }))
}

export function writeTool(deps: ToolDeps): FileTool<WriteValue> {
  const { inputSchema, parse } = writeInput()
  return {
    name: 'write',
    description: 'Create or fully replace a UTF-8 text file; replacing returns a diff of the change.',
    inputSchema,
    structured: writeStructured,
    annotations: { title: 'Write file', destructiveHint: true, idempotentHint: true, ...mutating },
    prompt:
      'Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default read-before-write policy requires it) and prefer edit for targeted changes. Replacing a file returns a diff of the change; dryRun: true shows it without writing.',
    execute: (args, context = {}) =>
      run(async () => {
        const { filePath, content, dryRun } = parse(args)
        const target = await resolveIn(deps, filePath, context)
        const shown = quotePath(target.displayPath)
        const diffOf = async (operation: 'create' | 'update', before: string | null, after: string): Promise<string | null> =>
          operation === 'create' || before === null ? null : (await changeDiffAsync(before, after)).text
        if (dryRun) {
          const preview = await remedied(() => previewWrite(deps.fs, target, content, context.signal))
          const value: WriteValue = { path: target.displayPath, ...preview, diff: await diffOf(preview.operation, preview.before, preview.after), dryRun: true }
          const verb = `Dry run: nothing was written. Would ${preview.operation === 'create' ? 'create' : 'update'} file`
          return ok(`<path>${shown}</path>\n<type>file</type>\n<content>\n${contentOf(verb, value)}\n</content>`, value)
        }
        const session = sessionOf(deps, context)
        const expected = deps.policy?.writeIntent(session, target)
        const outcome = await remedied(() => deps.fs.writeText(target, content, { expected, signal: context.signal }))
        deps.policy?.recordPresent(session, target, outcome.version)
        const diff = outcome.operation === 'create' || !hasBefore(outcome) ? null : (await diffOutcome(outcome)).text
        // `before` is read from the outcome only when asked for: a large one is decoded then, not for the diff.
        const value: WriteValue = {
          path: target.displayPath,
          operation: outcome.operation,
          get before() {
            return outcome.before
          },
          after: outcome.after,
          diff,
          dryRun: false,
        }
        const verb = outcome.operation === 'create' ? 'Created file' : 'Updated file'
        return ok(`<path>${shown}</path>\n<type>file</type>\n<content>\n${contentOf(verb, value)}\n</content>`, value)
      }, 'write'),
  }
}
