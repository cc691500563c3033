/** The byte engine: one literal edit on a file's bytes, counted, bounded and spliced a slice at a time. */
import { Buffer } from 'node:buffer'
import { FsError } from './errors.js'
import { editTuning, type EditSteps } from './edit-run.js'
import { asBuffer, detectLineEnding, incompleteTail, LINE_ENDING_SAMPLE_CHARS, normalizeLf, textOf } from './text.js'
import type { FsEditRequest } from './types.js'

/**
 * The most matches one `editText` call counts and replaces, over all its edits. Each match costs
 * a native search call and a copy (0.1–0.2 µs), so this bounds that work at about 0.2 s; a
 * `replaceAll` past it is `FS_TOO_LARGE` (an edit without `replaceAll` past it is
 * `FS_AMBIGUOUS_EDIT`, "more than" this many times), refused while counting, before anything is built.
 */
export const MAX_EDIT_MATCHES = 1_000_000

/** The work of one match (a native search call, a copy): as much as this many bytes. */
const MATCH_WORK = 64
/** The largest run copied by a loop rather than by a native call (whose fixed cost is ~50 ns). */
const SMALL_COPY = 24

/** The work budgets of one `editText` call, spent edit by edit, and where its edits changed the bytes. */
export interface Budget {
  matches: number
  scan: number
  /**
   * Bytes each edit left as they were at the start and at the end of its input (before its first
   * match, after its last), the least over the edits so far: the whole call's output shares at least
   * these with its input. `lf` stays true while every edit's input had no CRLF (matched on its bytes).
   */
  readonly kept: KeptBytes
}

/** See {@link Budget.kept}. */
export interface KeptBytes {
  head: number
  tail: number
  lf: boolean
}

/** Records that an edit of `size` bytes changed them from `first` (its first match) to `end` (past its last). */
function keep(kept: KeptBytes, size: number, first: number, end: number): void {
  kept.head = Math.min(kept.head, first)
  kept.tail = Math.min(kept.tail, size - end)
}

/**
 * One edit of a small text without CRLF (at most `editTuning.small`), in one synchronous run: the
 * same matches and bytes as {@link editStep}, without its slices (a small edit is most edits, and
 * slicing costs a small edit more than the edit itself). `undefined` when the text has a CRLF or
 * more than `editTuning.smallMatches` matches: {@link editStep} then does the edit.
 */
export function spliceSmall(
  bytes: Uint8Array,
  start: number,
  oldLf: string,
  edit: FsEditRequest,
  path: string,
  maxBytes: number,
  budget: Budget,
): Uint8Array | undefined {
  const haystack = asBuffer(bytes)
  const cr = haystack.indexOf(13, start)
  if (cr !== -1 && haystack.indexOf(CRLF, cr) !== -1) return undefined
  // Searched and written as strings: Node encodes them itself, with no Buffer made for either.
  const needleLength = Buffer.byteLength(oldLf, 'utf8')
  const first = haystack.indexOf(oldLf, start, 'utf8')
  let count = 0
  for (let i = first; i !== -1; i = haystack.indexOf(oldLf, i + needleLength, 'utf8')) if (++count > editTuning.smallMatches) return undefined
  const replacement = normalizeLf(edit.newString)
  const replacementLength = Buffer.byteLength(replacement, 'utf8')
  checkMatches(count, edit, path, budget, haystack.length, maxBytes, replacementLength - needleLength)
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
  keep(budget.kept, haystack.length, first, from)
  return out
}

/** One edit on `current` (the BOM, if any, is its first `start` bytes), in slices: the new bytes, or the edit's failure. */
export function* editStep(
  current: Uint8Array,
  start: number,
  oldLf: string,
  edit: FsEditRequest,
  path: string,
  maxBytes: number,
  budget: Budget,
): EditSteps<Uint8Array> {
  const raw = asBuffer(current)
  const needle = Buffer.from(oldLf, 'utf8')
  const newLf = normalizeLf(edit.newString)
  if ((yield* findCrlf(raw, start)) === -1) {
    const replacement = Buffer.from(newLf, 'utf8')
    const growth = replacement.length - needle.length
    const found = yield* countMatches(raw, start, needle, limitOf(edit, budget, raw.length, maxBytes, growth))
    checkMatches(found.count, edit, path, budget, raw.length, maxBytes, growth)
    keep(budget.kept, raw.length, found.offsets[0] as number, (found.offsets[found.count - 1] as number) + needle.length)
    return yield* spliceLf(raw, found, needle.length, replacement, raw.length + found.count * growth)
  }
  budget.kept.lf = false
  // CRLFs: match on an LF copy, splice the raw bytes.
  const lf = yield* lfCopy(raw, start)
  const replacement = Buffer.from(lineEndingOf(raw, start) === '\r\n' ? newLf.replaceAll('\n', '\r\n') : newLf, 'utf8')
  // Each LF of `oldString` may stand for a CRLF: a match takes at least `needle.length` raw bytes, at most one more per LF.
  const least = replacement.length - needle.length - countByte(needle, 10)
  const found = yield* countMatches(lf, 0, needle, limitOf(edit, budget, raw.length, maxBytes, least))
  checkMatches(found.count, edit, path, budget, raw.length, maxBytes, least)
  // The size when every match takes only `needle.length` raw bytes: an upper bound, exact without CRLF in any match.
  let outSize = raw.length + found.count * (replacement.length - needle.length)
  if (outSize > maxBytes) {
    outSize = yield* crlfSplicedSize(raw, start, found, needle.length, replacement.length)
    if (outSize > maxBytes) throw FsError.tooLarge('edit', path, outSize, maxBytes)
  }
  return yield* spliceCrlf(raw, start, found, needle.length, replacement, outSize)
}

/** Start offsets of the matches, and how many (at most `limit + 1`: counting stops past `limit`). */
interface Matches {
  readonly count: number
  readonly offsets: Uint32Array
}

/**
 * How many matches an edit may count before it is refused: the call's remaining match budget,
 * and for a `replaceAll` that grows the text by at least `growth` bytes a match, as many as keep
 * a text of `size` bytes within `maxBytes`.
 */
function limitOf(edit: FsEditRequest, budget: Budget, size: number, maxBytes: number, growth: number): number {
  if (!edit.replaceAll || growth <= 0) return budget.matches
  return Math.min(budget.matches, Math.floor((maxBytes - size) / growth))
}

/** The refusals a count alone decides, in the order of the contract: none, several without `replaceAll`, too many, too large. */
function checkMatches(count: number, edit: FsEditRequest, path: string, budget: Budget, size: number, maxBytes: number, growth: number): void {
  if (count === 0) throw FsError.at('FS_EDIT_NOT_FOUND', 'edit', path, 'oldString was not found')
  if (count > 1 && !edit.replaceAll) {
    if (count > budget.matches) {
      throw FsError.at('FS_AMBIGUOUS_EDIT', 'edit', path, `oldString matched more than ${budget.matches} times and replaceAll is false`)
    }
    throw FsError.at('FS_AMBIGUOUS_EDIT', 'edit', path, `oldString matched ${count} times and replaceAll is false`, { details: { matches: count } })
  }
  if (count > budget.matches) {
    const limit = MAX_EDIT_MATCHES
    throw FsError.at(
      'FS_TOO_LARGE',
      'edit',
      path,
      `oldString matched more than ${budget.matches} times: one call replaces at most ${limit} matches over all its edits`,
      { details: { limit } },
    )
  }
  // At least `growth` bytes a match: past the limit already at this count (counting stopped here, or the edit is a single match).
  if (size + count * growth > maxBytes) throw FsError.tooLarge('edit', path, size + count * growth, maxBytes)
  budget.matches -= count
}

/** The first CRLF in `raw` at or after `from`, or -1; searched a window at a time. */
function* findCrlf(raw: Buffer, from: number): EditSteps<number> {
  // Most files have no CR at all: one native scan for the byte (memchr, GB/s) settles it.
  if (raw.indexOf(13, from) === -1) return -1
  for (let at = from; at < raw.length - 1; at += editTuning.slice) {
    const found = raw.subarray(at, Math.min(at + editTuning.slice + 1, raw.length)).indexOf(CRLF)
    if (found !== -1) return at + found
    yield
  }
  return -1
}

const CRLF: Buffer = Buffer.from('\r\n')

/**
 * The non-overlapping matches of `needle` in `hay` from `from` on, left to right, counted up to
 * `limit + 1`. Searched a window at a time (a native search has no end offset, and over
 * adversarial text it runs at 5 ns a byte): each window's search is bounded.
 */
function* countMatches(hay: Buffer, from: number, needle: Buffer, limit: number): EditSteps<Matches> {
  const n = needle.length
  const end = hay.length
  let offsets: Uint32Array = new Uint32Array(16)
  let count = 0
  let work = 0
  for (let at = from; at <= end - n;) {
    const windowEnd = Math.min(at + editTuning.slice, end)
    // Every match that starts in [at, windowEnd) lies whole in the view.
    const view = hay.subarray(at, Math.min(windowEnd + n - 1, end))
    let next = windowEnd
    for (let i = view.indexOf(needle); i !== -1; i = view.indexOf(needle, i + n)) {
      if (count === offsets.length) offsets = grown(offsets)
      offsets[count++] = at + i
      if (count > limit) return { count, offsets }
      next = Math.max(windowEnd, at + i + n)
      if ((work += MATCH_WORK) >= editTuning.slice) {
        work = 0
        yield
      }
    }
    at = next
    if (at <= end - n) yield
  }
  return { count, offsets }
}

function grown(offsets: Uint32Array): Uint32Array {
  const bigger = new Uint32Array(offsets.length * 2)
  bigger.set(offsets)
  return bigger
}

/** How many times `byte` occurs in `bytes`. */
function countByte(bytes: Uint8Array, byte: number): number {
  let n = 0
  for (const b of bytes) if (b === byte) n++
  return n
}

/** Copies `src[from, to)` into `out` at `at`; returns the new `at`. */
function put(src: Buffer, from: number, to: number, out: Buffer, at: number): number {
  if (to - from > SMALL_COPY) return at + src.copy(out, at, from, to)
  for (let i = from; i < to; i++) out[at++] = src[i] as number
  return at
}

/** {@link put} of a long run, a slice at a time. */
function* putLong(src: Buffer, from: number, to: number, out: Buffer, at: number): EditSteps<number> {
  while (to - from > editTuning.slice) {
    at += src.copy(out, at, from, from + editTuning.slice)
    from += editTuning.slice
    yield
  }
  return put(src, from, to, out, at)
}

/** A text without CRLF (`raw`, BOM included) with each match (raw offsets) replaced: `size` bytes, counted before. */
function* spliceLf(raw: Buffer, found: Matches, needleLength: number, replacement: Buffer, size: number): EditSteps<Uint8Array> {
  // From Node's pool, as every encoding of core's is: a small file's edit costs no ArrayBuffer of its own.
  const out = Buffer.allocUnsafe(size)
  const r = replacement.length
  let at = 0
  let from = 0
  let work = 0
  for (let k = 0; k < found.count; k++) {
    const offset = found.offsets[k] as number
    at = offset - from > editTuning.slice ? yield* putLong(raw, from, offset, out, at) : put(raw, from, offset, out, at)
    at = put(replacement, 0, r, out, at)
    work += offset - from + r + MATCH_WORK
    from = offset + needleLength
    if (work >= editTuning.slice) {
      work = 0
      yield
    }
  }
  yield* putLong(raw, from, raw.length, out, at)
  return out
}

/** `raw` from `start` on with the CR of every CRLF dropped (pairs taken left to right, as `normalizeLf` does). */
function* lfCopy(raw: Buffer, start: number): EditSteps<Buffer> {
  const out = Buffer.allocUnsafe(raw.length - start)
  const end = raw.length
  let at = 0
  for (let i = start; i < end;) {
    const stop = Math.min(end, i + editTuning.slice)
    for (; i < stop; i++) {
      const b = raw[i] as number
      if (b !== 13 || raw[i + 1] !== 10) out[at++] = b
    }
    if (i < end) yield
  }
  return out.subarray(0, at)
}

/** The dominant line ending of the first 4096 characters of the text in `raw` (after the BOM). */
function lineEndingOf(raw: Buffer, start: number): '\n' | '\r\n' {
  // 4 bytes a character at most: enough bytes for the characters `detectLineEnding` samples.
  const head = raw.subarray(start, Math.min(raw.length, start + LINE_ENDING_SAMPLE_CHARS * 4))
  return detectLineEnding(textOf(head.subarray(0, head.length - incompleteTail(head))))
}

/**
 * Walks `raw` (from `start`) and its LF copy together, up to LF offset `to`: a CRLF is two raw
 * bytes and one LF byte, and belongs to the LF offset of its LF. Copies what it passes into `out`
 * unless `out` is undefined. `state` holds where it is in both, and in `out`.
 */
function walk(raw: Buffer, state: WalkState, to: number, out: Buffer | undefined): void {
  let i = state.raw
  let l = state.lf
  let at = state.at
  if (out === undefined) {
    for (; l < to; l++) i += raw[i] === 13 && raw[i + 1] === 10 ? 2 : 1
  } else {
    for (; l < to; l++) {
      const b = raw[i++] as number
      out[at++] = b
      if (b === 13 && raw[i] === 10) out[at++] = raw[i++] as number
    }
  }
  state.raw = i
  state.lf = l
  state.at = at
}

interface WalkState {
  /** Raw offset reached. */
  raw: number
  /** LF offset reached (0 at `start`). */
  lf: number
  /** Bytes written to the output. */
  at: number
}

/**
 * {@link spliceCrlf}'s walk without writing: the exact size of the result (the raw bytes a match
 * takes are known only by walking to it). Only used when the upper bound passes the limit.
 */
function* crlfSplicedSize(raw: Buffer, start: number, found: Matches, needleLength: number, replacementLength: number): EditSteps<number> {
  const state: WalkState = { raw: start, lf: 0, at: 0 }
  let taken = 0
  for (let k = 0; k < found.count; k++) {
    yield* walkTo(raw, state, found.offsets[k] as number, undefined)
    const from = state.raw
    walk(raw, state, state.lf + needleLength, undefined)
    taken += state.raw - from
  }
  return raw.length - taken + found.count * replacementLength
}

/** {@link walk} to LF offset `to`, a slice at a time. */
function* walkTo(raw: Buffer, state: WalkState, to: number, out: Buffer | undefined): EditSteps<void> {
  while (to - state.lf > editTuning.slice) {
    walk(raw, state, state.lf + editTuning.slice, out)
    yield
  }
  walk(raw, state, to, out)
}

/**
 * A text with CRLFs (`raw`, BOM included) with each match (offsets into its LF copy) replaced:
 * the bytes before, between and after the matches are copied as they are (a CRLF whose LF
 * starts a match goes with the match, as in `applyLiteralEdit`); `size` is at least the result's.
 */
function* spliceCrlf(raw: Buffer, start: number, found: Matches, needleLength: number, replacement: Buffer, size: number): EditSteps<Uint8Array> {
  const out = Buffer.allocUnsafe(size)
  const state: WalkState = { raw: start, lf: 0, at: raw.copy(out, 0, 0, start) }
  let work = 0
  for (let k = 0; k < found.count; k++) {
    const offset = found.offsets[k] as number
    const from = state.lf
    yield* walkTo(raw, state, offset, out)
    state.at = put(replacement, 0, replacement.length, out, state.at)
    walk(raw, state, offset + needleLength, undefined)
    work += offset - from + needleLength + replacement.length + MATCH_WORK
    if (work >= editTuning.slice) {
      work = 0
      yield
    }
  }
  // The rest is untouched: copied as it is.
  state.at = yield* putLong(raw, state.raw, raw.length, out, state.at)
  return state.at === size ? out : out.subarray(0, state.at)
}
