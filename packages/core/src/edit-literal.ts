/** The literal edit on strings: the reference the byte engine is tested against. */
import { constants as bufferConstants } from 'node:buffer'
import { FsError } from './errors.js'
import { detectLineEnding, normalizeLf } from './text.js'
import type { FsEditRequest } from './types.js'

/** The most bytes whose text always fits one string: the default, and the ceiling, of an edit's size limit. */
export const STRING_CEILING = bufferConstants.MAX_STRING_LENGTH

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
 *
 * The rules on strings, kept as the reference the byte engine (`editSteps`, which core
 * runs) is tested against. Its only bound is the string ceiling: a result longer than one
 * string can be is `FS_TOO_LARGE`, refused from the count before it is built.
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
  // The length of `after` (UTF-16 units, never more than its UTF-8 bytes), known from the count.
  const length = before.length + count * (newLf.length - oldLf.length)
  if (length > STRING_CEILING) throw FsError.tooLarge('edit', path, length, STRING_CEILING)
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
