import { FsError } from './errors.js'
import { Buffer } from 'node:buffer'
import { asBuffer, assertText, detectLineEnding, encodeText, hasUtf8Bom, normalizeLf, textOf } from './text.js'
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

/**
 * Result of {@link editTextBytes}: the bytes to publish, and the texts before and after, each
 * built when first read (from the input and output bytes, which must not change afterwards).
 * A class, not an object literal with getters: building one of those per edit cost more than
 * a small file's whole edit.
 */
export class ByteEditResult {
  /** The bytes to publish (BOM kept when the file had one). */
  readonly bytes: Uint8Array
  readonly #input: Uint8Array
  readonly #start: number
  readonly #stored: string | undefined
  #before: string | undefined
  #after: string | undefined

  constructor(input: Uint8Array, start: number, bytes: Uint8Array, stored: string | undefined, before: string | undefined) {
    this.bytes = bytes
    this.#input = input
    this.#start = start
    this.#stored = stored
    this.#before = before
  }

  /** The size of the bytes the edit read. */
  get inputLength(): number {
    return this.#input.length
  }

  /** The text as read, LF-normalized, without BOM. */
  get before(): string {
    return (this.#before ??= normalizeLf(textOf(this.#input, this.#start)))
  }

  /** The text after the last edit, LF-normalized, without BOM. */
  get after(): string {
    return (this.#after ??= normalizeLf(this.#stored ?? textOf(this.bytes, this.#start)))
  }
}

/** The most edits one `editText` call applies. */
export const MAX_EDITS = 1000

const CRLF: Buffer = Buffer.from('\r\n')

/**
 * The whole shared edit pipeline on a file's bytes: text check (`FS_NOT_TEXT`),
 * BOM kept, {@link applyLiteralEdit} for each edit in order (each on the text the
 * previous one left), re-encoding once. A failing edit of a list fails the whole
 * call: its error says which (`edit N of M`, `details.edit`) and nothing is
 * returned to publish. Backends call this inside their critical section, after
 * the version check.
 *
 * While the content has no CRLF (the LF-normalized text is the stored text), an edit is
 * done on the bytes ({@link spliceBytes}): the same matches, the same bytes out, with no
 * string built. A CRLF sends the rest to the text path. `before` and `after` are built
 * from `bytes` and the result when first read, so `bytes` must not change afterwards.
 */
export function editTextBytes(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string): ByteEditResult {
  assertText(bytes, path, 'edit')
  const bom = hasUtf8Bom(bytes)
  const start = bom ? 3 : 0
  const many = Array.isArray(edits)
  const count = many ? edits.length : 1
  let current = bytes
  let stored: string | undefined
  let firstBefore: string | undefined
  for (let i = 0; i < count; i++) {
    const edit = many ? (edits[i] as FsEditRequest) : (edits as FsEditRequest)
    try {
      if (stored === undefined && !hasCrlf(current, start)) {
        current = spliceBytes(current, start, edit, path)
        continue
      }
      const result = applyLiteralEdit(stored ?? textOf(current, start), edit, path)
      if (i === 0) firstBefore = result.before
      stored = result.stored
    } catch (err) {
      throw many ? whichEdit(err, i, count, path) : err
    }
  }
  return new ByteEditResult(bytes, start, stored === undefined ? current : encodeText(stored, bom), stored, firstBefore)
}

/** True when `bytes` (from `start` on) hold a CRLF. */
function hasCrlf(bytes: Uint8Array, start: number): boolean {
  const buffer = asBuffer(bytes)
  const cr = buffer.indexOf(13, start)
  return cr !== -1 && buffer.indexOf(CRLF, cr) !== -1
}

/**
 * {@link applyLiteralEdit} on the bytes of a text without CRLF (`start` skips the BOM): valid
 * UTF-8 is self-synchronizing, so the matches of `oldString`'s bytes are exactly the matches
 * of `oldString` in the text, and the spliced bytes are the encoding of the spliced text.
 * Same checks, same errors; the result is a fresh array.
 */
function spliceBytes(bytes: Uint8Array, start: number, edit: FsEditRequest, path: string): Uint8Array {
  const oldLf = normalizeLf(edit.oldString)
  if (oldLf === '') throw new FsError('FS_EDIT_NOT_FOUND', 'oldString must be a non-empty string')
  const haystack = asBuffer(bytes)
  // Searched and written as strings: Node encodes them itself, with no Buffer made for either.
  const needleLength = Buffer.byteLength(oldLf, 'utf8')
  const first = haystack.indexOf(oldLf, start, 'utf8')
  let count = 0
  for (let i = first; i !== -1; i = haystack.indexOf(oldLf, i + needleLength, 'utf8')) count++
  if (count === 0) throw FsError.at('FS_EDIT_NOT_FOUND', 'edit', path, 'oldString was not found')
  if (count > 1 && !edit.replaceAll) {
    throw FsError.at('FS_AMBIGUOUS_EDIT', 'edit', path, `oldString matched ${count} times and replaceAll is false`, {
      details: { matches: count },
    })
  }
  const replacement = normalizeLf(edit.newString)
  const replacementLength = Buffer.byteLength(replacement, 'utf8')
  // From Node's pool, as every encoding of core's is: a small file's edit costs no ArrayBuffer of its own.
  const out = Buffer.allocUnsafe(haystack.length + count * (replacementLength - needleLength))
  let from = 0
  let at = 0
  for (let i = first; i !== -1; i = count === 1 ? -1 : haystack.indexOf(oldLf, i + needleLength, 'utf8')) {
    at += haystack.copy(out, at, from, i)
    at += out.write(replacement, at, replacementLength, 'utf8')
    from = i + needleLength
  }
  haystack.copy(out, at, from)
  return out
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
