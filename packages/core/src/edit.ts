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
  const matches = findLiteral(before, oldLf)
  if (matches.length === 0) {
    throw FsError.at('FS_EDIT_NOT_FOUND', 'edit', path, 'oldString was not found')
  }
  if (matches.length > 1 && !edit.replaceAll) {
    throw FsError.at('FS_AMBIGUOUS_EDIT', 'edit', path, `oldString matched ${matches.length} times and replaceAll is false`, {
      details: { matches: matches.length },
    })
  }
  const after = splice(before, matches, oldLf.length, newLf)
  // No CRLF on disk: the spliced text is what gets stored; `after` is still reported
  // LF-normalized (a lone `\r` next to an inserted `\n` forms a CRLF).
  if (before === stored) return { before, after: normalizeLf(after), stored: after }

  // The file has CRLFs: splice the raw text so untouched lines keep their bytes.
  const eol = detectLineEnding(stored)
  const replacement = eol === '\n' ? newLf : newLf.replaceAll('\n', '\r\n')
  const collapsed = collapsedCrOffsets(stored)
  const rawMatches: number[] = []
  const rawEnds: number[] = []
  let k = 0
  for (const start of matches) {
    while (k < collapsed.length && (collapsed[k] as number) < start) k++
    rawMatches.push(start + k)
    const end = start + oldLf.length
    let j = k
    while (j < collapsed.length && (collapsed[j] as number) < end) j++
    rawEnds.push(end + j)
  }
  let out = ''
  let from = 0
  for (let m = 0; m < rawMatches.length; m++) {
    out += stored.slice(from, rawMatches[m]) + replacement
    from = rawEnds[m] as number
  }
  out += stored.slice(from)
  return { before, after: normalizeLf(out), stored: out }
}

/** LF-normalized offsets of the `\n` of every CRLF in `raw` (where a `\r` was dropped). */
function collapsedCrOffsets(raw: string): number[] {
  const offsets: number[] = []
  for (let i = raw.indexOf('\r\n'); i !== -1; i = raw.indexOf('\r\n', i + 2)) {
    offsets.push(i - offsets.length)
  }
  return offsets
}

function splice(text: string, starts: readonly number[], length: number, replacement: string): string {
  let out = ''
  let from = 0
  for (const start of starts) {
    out += text.slice(from, start) + replacement
    from = start + length
  }
  return out + text.slice(from)
}

/** Result of {@link editTextBytes}. */
export interface ByteEditResult {
  readonly before: string
  readonly after: string
  /** The bytes to publish (BOM kept when the file had one). */
  readonly bytes: Uint8Array
}

/**
 * The whole shared edit pipeline on a file's bytes: text check (`FS_NOT_TEXT`),
 * BOM kept, {@link applyLiteralEdit}, re-encoding. Backends call this inside
 * their critical section, after the version check.
 */
export function editTextBytes(bytes: Uint8Array, edit: FsEditRequest, path: string): ByteEditResult {
  const text = decodeText(bytes, path, 'edit')
  const result = applyLiteralEdit(text, edit, path)
  return { before: result.before, after: result.after, bytes: encodeText(result.stored, hasUtf8Bom(bytes)) }
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
}
