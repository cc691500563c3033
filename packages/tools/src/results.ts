import { FsError, isFsError, type FsErrorCode } from '@seamfs/core'
import { isAbortError, MAX_EDIT_SCAN_BYTES } from '@seamfs/core/backend'
import { errorText, escapeUnsafe, messagePath, type PathMessage } from './quote.js'
import type { ToolResult } from './types.js'

/** A bad argument: reported as `Error: <message>`, without a filesystem code. */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError'
}

export function ok<V>(text: string, value: V): ToolResult<V> {
  return { text, isError: false, value }
}

/**
 * Any failure as the model sees it: `Error: <message>`, with the code when there is one. Never
 * throws. A filesystem message names its path raw (core builds `cannot <verb> "<path>": …`):
 * the error's `path` is quoted here as a listing quotes names ({@link errorText}), and nothing
 * from the store is echoed raw.
 */
export function failure(err: unknown, toolVerb?: string): ToolResult<never> {
  // The tools' own deadline ended the call (through the store's abort): the store was slow, not the caller.
  if (isFsError(err, 'FS_ABORTED') && isToolDeadline(err.cause)) return timedOut(err.cause.ms, err.indeterminate)
  if (isFsError(err)) {
    const text = `Error: ${bounded(errorText(inToolWords(err, toolVerb)))}`
    const base = { isError: true, code: err.code, ...(err.retryable ? { retryable: true } : {}) }
    // A failed mutation whose answer was lost may have landed: the model must look before it repeats it.
    if (err.indeterminate) return { ...base, text: `${text}${INDETERMINATE_REMEDY}`, indeterminate: true }
    return { ...base, text }
  }
  if (err instanceof ToolInputError) return { text: `Error: ${bounded(err.message)}`, isError: true }
  // A backend not built on core's base class may reject with Node's own AbortError.
  if (isAbortError(err)) return { text: 'Error: the operation was aborted', isError: true, code: 'FS_ABORTED' }
  return { text: `Error: internal error: ${bounded(escapeUnsafe(detailOf(err)))}`, isError: true, code: 'FS_IO_ERROR' }
}

/**
 * A failure in the words of the tool the model called: the message's opening, as the error's own
 * fields spell it (`cannot <verb> "<path>"`, from `verb` and `path`: the message is not parsed),
 * says the tool's verb instead (`cannot delete "…"`, not `remove`; `cannot move`, not `rename`;
 * `cannot read`, not the `stat` a tool looks with first). The error's `verb` field stays the
 * contract's, for the application.
 */
function inToolWords(err: FsError, toolVerb: string | undefined): PathMessage {
  const { message, verb, path } = err
  if (toolVerb === undefined || verb === undefined || path === undefined || verb === toolVerb) return err
  const opening = `cannot ${verb} "${path}"`
  return message.startsWith(opening) ? { message: `cannot ${toolVerb} "${path}"${message.slice(opening.length)}`, path } : err
}

/** What the model is told after a mutation whose outcome is not known. */
export const INDETERMINATE_REMEDY = ' — the change may or may not have been made: read the file (or list the directory) before retrying'

/** The reason a call's deadline aborts its signal with: how the tools tell their own deadline from the caller's abort. */
export class ToolDeadline extends Error {
  override readonly name = 'ToolDeadline'

  constructor(readonly ms: number) {
    super(`the tool call's deadline of ${ms} ms passed`)
  }
}

/** True when `reason` (a signal's) is a tools deadline. */
export function isToolDeadline(reason: unknown): reason is ToolDeadline {
  return reason instanceof ToolDeadline
}

/** `ms` as people say it: whole seconds from 1 s up. */
function duration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/**
 * What the model reads for a call that ran out of its deadline: a retryable `FS_IO_ERROR` that blames
 * the store (it did not answer), never the model's input; for a mutation that may still land, the
 * outcome is unknown and the text says to read before retrying.
 */
export function timedOut(ms: number, indeterminate: boolean): ToolResult<never> {
  const head = `Error: timed out after ${duration(ms)}: the store did not answer in time (it may be slow, overloaded or unreachable)`
  const tail = indeterminate ? INDETERMINATE_REMEDY : '; try again later'
  return { text: `${head}${tail}`, isError: true, code: 'FS_IO_ERROR', retryable: true, ...(indeterminate ? { indeterminate } : {}) }
}

/** The longest error text the model is shown, in UTF-16 units; a longer one (a megabyte path echoed back) is cut in the middle. */
export const MAX_ERROR_CHARS = 2048

function bounded(text: string): string {
  if (text.length <= MAX_ERROR_CHARS) return text
  const keep = MAX_ERROR_CHARS / 2
  let head = text.slice(0, keep)
  let tail = text.slice(text.length - keep / 2)
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1)
  if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1)
  return `${head}… (${text.length - head.length - tail.length} characters cut) …${tail}`
}

/** What a thrown value says, whatever it is: `String()` itself throws for some objects. */
function detailOf(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err)
  } catch {
    return 'an unprintable value was thrown'
  }
}

/**
 * `err` with a model-facing message; code, retryability, outcome, details, verb and cause are kept.
 * `path` is the path the new message quotes raw (`"<path>"`), as core's messages do: `err`'s own by default.
 */
function restated(err: FsError, message: string, path: string | undefined = err.path, code: FsErrorCode = err.code): FsError {
  const { retryable, indeterminate, details, verb } = err
  return new FsError(code, message, { cause: err, retryable, indeterminate, ...(details && { details }), verb, path })
}

/**
 * The model-facing remedy for a refused mutation, added only here, at the tool
 * boundary (backend messages stay machine-oriented). Keeps the code and cause.
 */
export function withRemedy(err: unknown): unknown {
  if (isFsError(err, 'FS_STALE_VERSION')) return restated(err, `${err.message} — re-read the file, then retry`)
  if (isFsError(err, 'FS_NOT_OBSERVED')) return restated(err, `${err.message} — read the file, then retry`)
  return err
}

/**
 * A refused edit in the words of the edit tool's arguments (`old_string`,
 * `replace_all`) where core speaks the contract's (`oldString`, `replaceAll`).
 * Built from the code, `details.matches`, `details.edit` (which edit of a list,
 * 0-based; `count` is the list's length) and the path the tool resolved, never
 * from core's message. The tool has already rejected an empty `old_string`, so
 * `FS_EDIT_NOT_FOUND` here means no match. A list's refusal names the edit as
 * the model wrote it (`edits[1].old_string`) and says nothing was changed.
 * Other refusals get {@link withRemedy}.
 */
export function withEditWording(err: unknown, path: string, count?: number): unknown {
  const index = isFsError(err) ? err.details?.edit : undefined
  const at = count !== undefined && index !== undefined ? `edits[${index}].` : ''
  const which = at === '' ? '' : ` (edit ${(index ?? 0) + 1} of ${count}; no edit was applied)`
  if (isFsError(err, 'FS_EDIT_NOT_FOUND')) return restated(err, `${at}old_string was not found in "${path}"${which}`, path)
  if (isFsError(err, 'FS_AMBIGUOUS_EDIT')) {
    const matches = err.details?.matches
    const times = matches === undefined ? 'more than once' : `${matches} times`
    const fix = `provide a more specific ${at}old_string or set ${at}replace_all to true`
    return restated(err, `${at}old_string matched ${times} in "${path}"${which}; ${fix}`, path)
  }
  const bound = isFsError(err, 'FS_TOO_LARGE') ? editBound(err, at, path) : undefined
  if (bound !== undefined) return restated(err as FsError, `${bound}${which}`, path)
  return withRemedy(err)
}

/**
 * An edit refused by one of the work bounds of an edit call, in the tool's words, told apart by
 * its details: the matches of one call (`limit` without `size`), or the text one call searches
 * (`limit` of `MAX_EDIT_SCAN_BYTES`, far above any `maxTextBytes`). `undefined` for a file, or a
 * result, above `maxTextBytes`: the filesystem's message says it. `path` goes in raw, in quotes.
 */
function editBound(err: FsError, at: string, path: string): string | undefined {
  const shown = `"${path}"`
  const { size, limit } = err.details ?? {}
  if (limit === undefined) return undefined
  if (size === undefined) {
    return `${at}old_string matched more than ${limit} times in ${shown} (one edit call replaces at most ${limit} matches in all); use a more specific ${at}old_string`
  }
  if (limit === MAX_EDIT_SCAN_BYTES) {
    return `the edits would search more than ${limit} bytes of text in ${shown} in all (each edit searches the whole file); split them into several calls`
  }
  return undefined
}

/**
 * A refused `delete`: a directory with entries says what to do instead (the tool removes one
 * file or one empty directory, never a tree). Other refusals get {@link withRemedy}.
 */
export function withDeleteRemedy(err: unknown): unknown {
  if (isFsError(err, 'FS_NOT_EMPTY')) return restated(err, `${err.message} — delete its entries first; delete removes only files and empty directories`)
  return withRemedy(err)
}

/**
 * A refused `move` in the store. An existing destination (`FS_NOT_OBSERVED`) is restated from the
 * code and the destination path, with the way on: a file is replaced only after the session read
 * it; a directory (`into` is then the path inside it the model may have meant; also for
 * `FS_NOT_REGULAR_FILE`) is never replaced, and is said as `FS_NOT_REGULAR_FILE` whatever the
 * store answered: no read helps, another path does. Other refusals get {@link withRemedy}.
 */
export function withMoveRemedy(err: unknown, to: string, into: string | undefined): unknown {
  const exists = `cannot move onto existing "${to}"`
  // `to` goes in raw, as the error's path; `into`, a second path, is quoted here.
  if (into !== undefined && isFsError(err))
    return restated(err, `${exists}: it is a directory — to move into it, give the full new path (${messagePath(into)})`, to, 'FS_NOT_REGULAR_FILE')
  if (isFsError(err, 'FS_NOT_OBSERVED')) return restated(err, `${exists} — read it first to replace it, or choose another destination_path`, to)
  return withRemedy(err)
}

/**
 * Any failure as a tool reports it, for hosts that call the contract themselves next to the tools
 * (the deepagents backend): {@link failure} of the error with the tools' remedy for a refused
 * mutation. Never throws; nothing from the store is echoed raw; a long text is cut. `toolVerb`:
 * the host's word for the call (`delete`), said in place of the contract's (`remove`).
 */
export function toolFailure(err: unknown, toolVerb?: string): ToolResult<never> {
  return failure(withRemedy(err), toolVerb)
}
