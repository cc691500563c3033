/** Validation of `editText`'s edit requests, run by core's public method before any I/O. */
import { FsError } from './errors.js'
import { normalizeLf } from './text.js'
import type { FsEditRequest } from './types.js'

/** The most edits one `editText` call applies. */
export const MAX_EDITS = 1000

/** Rejects a malformed edit request, or list of them, (wrong types, empty) with `FS_EDIT_NOT_FOUND`, before any I/O. */
export function assertEditRequests(edits: unknown): asserts edits is FsEditRequest | readonly FsEditRequest[] {
  if (!Array.isArray(edits)) return assertEditRequest(edits)
  if (edits.length === 0) throw new FsError('FS_EDIT_NOT_FOUND', 'a list of edits needs at least one edit')
  if (edits.length > MAX_EDITS) throw new FsError('FS_EDIT_NOT_FOUND', `at most ${MAX_EDITS} edits in one call (found ${edits.length})`)
  edits.forEach((edit: unknown, i) => {
    try {
      assertEditRequest(edit)
    } catch (err) {
      if (!(err instanceof FsError)) throw err
      throw new FsError(err.code, `edit ${i + 1} of ${edits.length}: ${err.message}`, { details: { edit: i } })
    }
  })
}

/** Rejects a malformed edit request (wrong types) with `FS_EDIT_NOT_FOUND`, before any I/O. */
export function assertEditRequest(edit: unknown): asserts edit is FsEditRequest {
  const e = edit as Partial<Record<keyof FsEditRequest, unknown>> | null
  if (typeof e !== 'object' || e === null || typeof e.oldString !== 'string' || typeof e.newString !== 'string') {
    throw new FsError('FS_EDIT_NOT_FOUND', 'an edit needs string oldString and newString')
  }
  if (e.replaceAll !== undefined && typeof e.replaceAll !== 'boolean') {
    throw new FsError('FS_EDIT_NOT_FOUND', 'replaceAll must be a boolean')
  }
  if (normalizeLf(e.oldString) === '') throw new FsError('FS_EDIT_NOT_FOUND', 'oldString must be a non-empty string')
  // A lone surrogate has no UTF-8 form: it would be stored as U+FFFD (and `after` would lie), or
  // match half of a pair in the file and leave the other half alone.
  if (!e.oldString.isWellFormed()) throw new FsError('FS_EDIT_NOT_FOUND', 'oldString has a lone surrogate (not valid Unicode)')
  if (!e.newString.isWellFormed()) throw new FsError('FS_NOT_TEXT', 'newString has a lone surrogate (not valid Unicode)')
}
