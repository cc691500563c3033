import { FsError, isFsError, type FsEditOutcome, type FsEditRequest, type FsTarget, type FsVersion, type PolicyOwner } from '@seamfs/core'
import { NON_BLANK, type ToolArgs } from './args.js'
import { changeDiffAsync, diffOutcome } from './diff.js'
import { previewEdit } from './dry-run.js'
import { quotePath } from './quote.js'
import { ok, ToolInputError, withEditWording } from './results.js'
import { BOOLEAN, object, STRING } from './structured.js'
import { mutating, remedied, resolveIn, run, sessionOf, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** The most edits one `edit` call takes in its `edits` list. */
export const MAX_TOOL_EDITS = 100

/** Canonical value of `edit`. */
export interface EditValue {
  readonly path: string
  /**
   * The whole text before and after (LF-normalized, without BOM); for a dry run, what they would be.
   * After an edit they are built when first read (enumerable accessors, so a spread or
   * `JSON.stringify` still sees them): a caller that reads only the diff never decodes the file.
   */
  readonly before: string
  readonly after: string
  /** The bounded unified diff the model read after the success line. */
  readonly diff: string
  /** True when nothing was written (`dryRun`). */
  readonly dryRun: boolean
}

/** The checked arguments of `edit`, defaults filled in: the edits of exactly one of its two forms. */
export interface EditArgs {
  readonly filePath: string
  /** The edits, in order (one for the `old_string`/`new_string`/`replace_all` form). */
  readonly edits: readonly FsEditRequest[]
  /** True when given as the `edits` list (a refusal then names the edit: `edits[1].old_string`). */
  readonly asList: boolean
  /** Default false. */
  readonly dryRun: boolean
}

/** The value of an edit that ran: `before` and `after` read from the outcome only when asked for. */
function editValue(path: string, outcome: FsEditOutcome, diff: string): EditValue {
  return {
    path,
    get before() {
      return outcome.before
    },
    get after() {
      return outcome.after
    },
    diff,
    dryRun: false,
  }
}

export const editStructured: StructuredOutput<EditValue> = {
  schema: object({ path: STRING, diff: STRING, dryRun: BOOLEAN }),
  content: (v) => ({ path: v.path, diff: v.diff, dryRun: v.dryRun }),
}

const EDIT_PROPERTIES = {
  old_string: { type: 'string', minLength: 1, description: 'Literal text to replace. Must match exactly.' },
  new_string: { type: 'string', description: 'Literal replacement text. Use an empty string to delete the match.' },
}

function requestOf(a: ToolArgs, at: string): FsEditRequest {
  const oldString = a.string('old_string')
  const newString = a.string('new_string')
  if (oldString === newString) throw new ToolInputError(`${at}old_string and ${at}new_string must differ`)
  return { oldString, newString, replaceAll: a.boolean('replace_all', false) }
}

const SINGLE_FORM = ['old_string', 'new_string', 'replace_all'] as const

/** Both forms given: refused before either is checked (an `edits: []` beside `old_string` is told this, not the list's shape). */
function notBoth(given: (name: string) => boolean): void {
  const single = SINGLE_FORM.filter(given)
  if (given('edits') && single.length > 0) {
    throw new ToolInputError(`edit takes either old_string/new_string/replace_all or edits, not both (given: ${single.join(', ')} and edits)`)
  }
}

/** The single form (`old_string`/`new_string`/`replace_all`) or the `edits` list: exactly one of them. */
function requested(a: ToolArgs): Pick<EditArgs, 'edits' | 'asList'> {
  notBoth((k) => a.has(k))
  const list = a.optionalList('edits')
  if (list !== undefined) return { edits: list.map((item, i) => requestOf(item, `edits[${i}].`)), asList: true }
  if (!a.has('old_string') || !a.has('new_string')) {
    throw new ToolInputError('edit needs old_string and new_string, or edits (a list of {old_string, new_string, replace_all})')
  }
  return { edits: [requestOf(a, '')], asList: false }
}

/** The success line, worded as before multi-edit so hosts matching on it keep working. */
function successLine(shown: string, request: EditArgs): string {
  if (request.asList) {
    const n = request.edits.length
    return `The file ${shown} has been updated. ${n === 1 ? 'The edit was' : `All ${n} edits were`} applied.`
  }
  return request.edits[0]?.replaceAll === true
    ? `The file ${shown} has been updated. All occurrences were successfully replaced.`
    : `The file ${shown} has been updated successfully.`
}

export function editInput(): ToolInput<EditArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to edit, resolved by the filesystem backend.' },
      old_string: {
        ...EDIT_PROPERTIES.old_string,
        type: ['string', 'null'],
        description: 'Literal text to replace. Must match exactly. Give it with new_string, or use edits instead.',
      },
      new_string: { ...EDIT_PROPERTIES.new_string, type: ['string', 'null'] },
      replace_all: {
        type: ['boolean', 'null'],
        description: 'Replace all matches. Defaults to false; when false, old_string must appear exactly once.',
      },
      edits: {
        type: ['array', 'null'],
        minItems: 1,
        maxItems: MAX_TOOL_EDITS,
        description:
          'Several edits to this file, applied in order (each to the text the previous one left), all or nothing. Use instead of old_string/new_string/replace_all, never with them.',
        items: {
          type: 'object',
          properties: {
            ...EDIT_PROPERTIES,
            replace_all: { type: ['boolean', 'null'], description: 'Replace all matches of this old_string. Defaults to false.' },
          },
          required: ['old_string', 'new_string'],
          additionalProperties: false,
        },
      },
      dryRun: { type: ['boolean', 'null'], description: 'Return the diff the edit would make and change nothing. Defaults to false.' },
    },
    required: ['file_path'],
    additionalProperties: false,
  }
  return toolInput(
    inputSchema,
    (a): EditArgs => {
      const filePath = a.string('file_path')
      return { filePath, ...requested(a), dryRun: a.boolean('dryRun', false) }
    },
    (raw) => notBoth((k) => raw[k] !== undefined && raw[k] !== null),
  )
}

/**
 * The policy's guard for the edit. A file the session never read that does not exist is
 * `FS_NOT_FOUND`, not `FS_NOT_OBSERVED`: reading it first could not help (as delete and move say);
 * the look costs a stat only when the policy refuses. Without a policy, the contract's answer for a
 * missing file (`FS_STALE_VERSION`, "no longer exists") is said the same way.
 */
async function editIntent(
  deps: ToolDeps,
  session: PolicyOwner,
  target: FsTarget,
  signal: AbortSignal | undefined,
): Promise<{ readonly version: FsVersion } | undefined> {
  try {
    return deps.policy?.editIntent(session, target)
  } catch (err) {
    if (!isFsError(err, 'FS_NOT_OBSERVED')) throw err
    if (await missing(deps, target, signal)) throw FsError.notFound('edit', target.displayPath, err)
    throw err
  }
}

/** Whether `target` is surely absent now (a failed look says nothing). */
async function missing(deps: ToolDeps, target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
  return (await deps.fs.stat(target, { signal }).catch(() => null)) === undefined
}

export function editTool(deps: ToolDeps): FileTool<EditValue> {
  const { inputSchema, parse } = editInput()
  return {
    name: 'edit',
    description: 'Replace literal text in an existing UTF-8 text file; returns a diff of the change.',
    inputSchema,
    structured: editStructured,
    annotations: { title: 'Edit file', destructiveHint: true, idempotentHint: false, ...mutating },
    prompt:
      'Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. For several changes to one file, pass them as edits: [{old_string, new_string, replace_all}] in one call: they apply in order, all or nothing. The result shows a diff of the change; dryRun: true shows it without changing the file. Read the file first (the default read-before-write policy requires it), unless you just created or edited it in this session.',
    execute: (args, context = {}) =>
      run(async () => {
        const request = parse(args)
        const edits: FsEditRequest | readonly FsEditRequest[] = request.asList ? request.edits : (request.edits[0] as FsEditRequest)
        const target = await resolveIn(deps, request.filePath, context)
        const session = sessionOf(deps, context)
        const reword = (err: unknown): unknown => withEditWording(err, target.displayPath, request.asList ? request.edits.length : undefined)
        const shown = quotePath(target.displayPath)
        if (request.dryRun) {
          const preview = await remedied(() => previewEdit(deps.fs, target, edits, context.signal), reword)
          const diff = (await changeDiffAsync(preview.before, preview.after)).text
          return ok<EditValue>(`Dry run: nothing was written. The edit would change ${shown} as follows:\n\n${diff}`, {
            path: target.displayPath,
            ...preview,
            diff,
            dryRun: true,
          })
        }
        const outcome = await remedied(async () => {
          const expected = await editIntent(deps, session, target, context.signal)
          try {
            return await deps.fs.editText(target, edits, { expected, signal: context.signal })
          } catch (err) {
            // Unguarded (no policy), the contract calls a missing file stale: to the model it is not found.
            if (expected === undefined && isFsError(err, 'FS_STALE_VERSION') && (await missing(deps, target, context.signal)))
              throw FsError.notFound('edit', target.displayPath, err)
            throw err
          }
        }, reword)
        deps.policy?.recordPresent(session, target, outcome.version)
        // The diff comes from the changed region of the outcome's bytes: neither whole text is decoded
        // unless the value's `before` or `after` is read.
        const diff = (await diffOutcome(outcome)).text
        return ok(`${successLine(shown, request)}\n\n${diff}`, editValue(target.displayPath, outcome, diff))
      }, 'edit'),
  }
}
