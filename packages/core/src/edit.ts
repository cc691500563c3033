import { FsError } from './errors.js'
import { decodeText, detectLineEnding, encodeText, hasUtf8Bom, normalizeLf } from './text.js'
import type { FsEditRequest } from './types.js'

/** Result of {@link applyLiteralEdit}. */
export interface LiteralEditResult {
  /** The text before, LF-normalized. */
  readonly before: string
  /** The text after, LF-normalized. */
  readonly after: string
  /** The new text to store: untouched regions keep their bytes, inserted text takes the dominant ending. */
  readonly stored: string
}

/**
 * Start offsets of the non-overlapping occurrences of `needle` in `haystack`,
 * scanning left to right. `needle` must not be empty.
 */
export function findLiteral(haystack: string, needle: string): number[] {
  const found: number[] = []
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) {
    found.push(i)
  }
  return found
}

/**
 * How many times {@link findLiteral} would find `needle`, without collecting the offsets: a
 * text of a few hundred MB can hold more matches than a JavaScript array can (V8 aborts the
 * process past about 112 million elements).
 */
function countLiteral(haystack: string, needle: string): number {
  let count = 0
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++
  return count
}

/**
 * The literal edit of `FileSystem.editText` on decoded text (`stored`, without BOM, line
 * endings as on disk): match on LF-normalized text, `$` literal, empty or
 * missing `oldString` → `FS_EDIT_NOT_FOUND`, several matches without
 * `replaceAll` → `FS_AMBIGUOUS_EDIT`. Text outside the matches keeps its exact
 * line endings; the replacement takes the file's dominant one.
 */
export function applyLiteralEdit(stored: string, edit: FsEditRequest, path: string): LiteralEditResult {
  const oldLf = normalizeLf(edit.oldString)
  const newLf = normalizeLf(edit.newString)
  if (oldLf === '') throw new FsError('FS_EDIT_NOT_FOUND', 'oldString must be a non-empty string')
  const before = normalizeLf(stored)
  const count = countLiteral(before, oldLf)
  if (count === 0) {
    throw FsError.at('FS_EDIT_NOT_FOUND', 'edit', path, 'oldString was not found')
  }
  if (count > 1 && !edit.replaceAll) {
    throw FsError.at('FS_AMBIGUOUS_EDIT', 'edit', path, `oldString matched ${count} times and replaceAll is false`, {
      details: { matches: count },
    })
  }
  const after = spliceMatches(before, oldLf, before, newLf)
  // No CRLF on disk: the spliced text is what gets stored; `after` is still reported
  // LF-normalized (a lone `\r` next to an inserted `\n` forms a CRLF).
  if (before === stored) return { before, after: normalizeLf(after), stored: after }

  // The file has CRLFs: splice the raw text so untouched lines keep their bytes.
  const eol = detectLineEnding(stored)
  const replacement = eol === '\n' ? newLf : newLf.replaceAll('\n', '\r\n')
  const out = spliceMatches(before, oldLf, stored, replacement)
  return { before, after: normalizeLf(out), stored: out }
}

/** Pieces joined in batches: one `+=` per piece would build a string tree too large for the heap. */
const SPLICE_BATCH = 4096

/**
 * `raw` with every match of `needle` in `lf` (its LF-normalized text) replaced: a match's
 * offsets move right by the CRs of the CRLFs before them, counted in the same pass. Nothing
 * is collected per match: a text can hold more matches than an array can.
 */
function spliceMatches(lf: string, needle: string, raw: string, replacement: string): string {
  let crlf = raw === lf ? -1 : raw.indexOf('\r\n')
  let collapsed = 0
  // Counts every CRLF whose `\n` lies before `offset` in the LF-normalized text.
  const skipTo = (offset: number): void => {
    while (crlf !== -1 && crlf - collapsed < offset) {
      collapsed++
      crlf = raw.indexOf('\r\n', crlf + 2)
    }
  }
  let out = ''
  const batch: string[] = []
  let from = 0
  for (let i = lf.indexOf(needle); i !== -1; i = lf.indexOf(needle, i + needle.length)) {
    skipTo(i)
    batch.push(raw.slice(from, i + collapsed), replacement)
    skipTo(i + needle.length)
    from = i + needle.length + collapsed
    if (batch.length >= SPLICE_BATCH) {
      out += batch.join('')
      batch.length = 0
    }
  }
  return out + batch.join('') + raw.slice(from)
}

/** Result of {@link editTextBytes}. */
export interface ByteEditResult {
  readonly before: string
  readonly after: string
  /** The bytes to publish (BOM kept when the file had one). */
  readonly bytes: Uint8Array
}

/** The most edits one `editText` call applies. */
export const MAX_EDITS = 1000

/**
 * The whole shared edit pipeline on a file's bytes: text check (`FS_NOT_TEXT`),
 * BOM kept, {@link applyLiteralEdit} for each edit in order (each on the text the
 * previous one left), re-encoding once. A failing edit of a list fails the whole
 * call: its error says which (`edit N of M`, `details.edit`) and nothing is
 * returned to publish. Backends call this inside their critical section, after
 * the version check.
 */
export function editTextBytes(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string): ByteEditResult {
  const text = decodeText(bytes, path, 'edit')
  if (!Array.isArray(edits)) {
    const result = applyLiteralEdit(text, edits as FsEditRequest, path)
    return { before: result.before, after: result.after, bytes: encodeText(result.stored, hasUtf8Bom(bytes)) }
  }
  const list = edits as readonly FsEditRequest[]
  let stored = text
  let before: string | undefined
  let after = ''
  list.forEach((edit, i) => {
    let result: LiteralEditResult
    try {
      result = applyLiteralEdit(stored, edit, path)
    } catch (err) {
      throw whichEdit(err, i, list.length, path)
    }
    before ??= result.before
    after = result.after
    stored = result.stored
  })
  return { before: before ?? normalizeLf(text), after, bytes: encodeText(stored, hasUtf8Bom(bytes)) }
}

/** `err` of edit `i` of `n`, saying which: `cannot edit "<path>": edit 2 of 3: oldString was not found`. */
function whichEdit(err: unknown, i: number, n: number, path: string): unknown {
  if (!(err instanceof FsError)) return err
  const head = `cannot edit "${path}": `
  const reason = err.message.startsWith(head) ? err.message.slice(head.length) : err.message
  return new FsError(err.code, `${head}edit ${i + 1} of ${n}: ${reason}`, {
    cause: err.cause,
    retryable: err.retryable,
    details: { ...err.details, edit: i },
  })
}

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
