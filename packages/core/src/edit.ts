import { Buffer, constants as bufferConstants } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { FsError, throwIfAborted, type FsVerb } from './errors.js'
import { asBuffer, assertText, assertTextSteps, detectLineEnding, hasUtf8Bom, incompleteTail, LINE_ENDING_SAMPLE_CHARS, normalizeLf, textOf } from './text.js'
import type { FsEditRequest } from './types.js'

/** The most bytes whose text always fits one string: the default, and the ceiling, of an edit's size limit. */
const STRING_CEILING = bufferConstants.MAX_STRING_LENGTH

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
 * The rules on strings, kept as the reference the byte engine ({@link editSteps}, which core
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

/**
 * Result of {@link editTextBytes}: the bytes to publish, and the texts before and after, each
 * built when first read (from the input and output bytes, which must not change afterwards).
 * A class, not an object literal with getters: building one of those per edit cost more than
 * a small file's whole edit. Once `before` is built the input bytes are let go.
 */
export class ByteEditResult {
  /** The bytes to publish (BOM kept when the file had one). */
  readonly bytes: Uint8Array
  /** The size of the bytes the edit read. */
  readonly inputLength: number
  #input: Uint8Array | undefined
  readonly #start: number
  #before: string | undefined
  #after: string | undefined

  constructor(input: Uint8Array, start: number, bytes: Uint8Array) {
    this.bytes = bytes
    this.inputLength = input.length
    this.#input = input
    this.#start = start
  }

  /** The text as read, LF-normalized, without BOM. */
  get before(): string {
    if (this.#before === undefined) {
      this.#before = normalizeLf(textOf(this.#input as Uint8Array, this.#start))
      this.#input = undefined
    }
    return this.#before
  }

  /** The text after the last edit, LF-normalized, without BOM. */
  get after(): string {
    return (this.#after ??= normalizeLf(textOf(this.bytes, this.#start)))
  }
}

/** The most edits one `editText` call applies. */
export const MAX_EDITS = 1000

/**
 * The most matches one `editText` call counts and replaces, over all its edits. Each match costs
 * a native search call and a copy (0.1–0.2 µs), so this bounds that work at about 0.2 s; a
 * `replaceAll` past it is `FS_TOO_LARGE` (an edit without `replaceAll` past it is
 * `FS_AMBIGUOUS_EDIT`, "more than" this many times), refused while counting, before anything is built.
 */
export const MAX_EDIT_MATCHES = 1_000_000

/**
 * The most bytes of text one `editText` call searches, over all its edits: each edit of a list
 * searches the whole text the previous one left, so a list costs its length times the file.
 * An edit that would pass it is `FS_TOO_LARGE` before it searches; the first edit of a call
 * always fits (a file is at most `maxTextBytes`, never above `MAX_STRING_LENGTH`, about 512 MiB).
 */
export const MAX_EDIT_SCAN_BYTES = 1024 ** 3

/**
 * The sizes of the edit engine's slices. Internal: tests shrink them to drive the sliced paths
 * with small inputs; nothing else changes them.
 */
export const editTuning = {
  /**
   * The work of one slice, in bytes searched, walked or copied (a match counts as
   * {@link MATCH_WORK} bytes): a few milliseconds at the slowest measured rates (a native search
   * over adversarial text, about 5 ns a byte; a walk over a text with CRLFs, 1–2 ns a byte).
   */
  slice: 1 << 20,
  /** Up to this size a text is checked, and an edit of it without CRLF done, in one run (about 1 ms of work at most). */
  small: 64 * 1024,
  /** The most matches the one-run path counts before it leaves the edit to the sliced one. */
  smallMatches: 4096,
  /** Text validation runs at several GB/s: its slices are larger. */
  validate: 8 << 20,
  /**
   * How long `editText` runs an edit inside the backend's critical section (its `transform`), in
   * milliseconds; an edit that needs longer is finished outside it, in slices.
   */
  sync: 25,
}

/** The work of one match (a native search call, a copy): as much as this many bytes. */
const MATCH_WORK = 64
/** The largest run copied by a loop rather than by a native call (whose fixed cost is ~50 ns). */
const SMALL_COPY = 24

/** Work of the edit engine, resumable: each `yield` is a point where the driver may stop or give the event loop a turn. */
export type EditSteps<T = ByteEditResult> = Generator<void, T, void>

/** The work budgets of one `editText` call, spent edit by edit. */
interface Budget {
  matches: number
  scan: number
}

/**
 * The whole shared edit pipeline on a file's bytes, as resumable steps: text check
 * (`FS_NOT_TEXT`), BOM kept, the literal edit of `FileSystem.editText` for each edit in order
 * (each on the bytes the previous one left), every edit on the bytes (no string is built). A
 * failing edit of a list fails the whole call: its error says which (`edit N of M`,
 * `details.edit`) and nothing is returned to publish.
 *
 * The bounds, each checked BEFORE the work it bounds:
 * - a file above `maxBytes` is `FS_TOO_LARGE` before it is read;
 * - matches are counted first (their offsets kept, 4 bytes each), and counting stops as soon as
 *   the result would pass `maxBytes` (`FS_TOO_LARGE`, `details.size` the size it would at least
 *   have) or the call would pass {@link MAX_EDIT_MATCHES}; the result is allocated once, at its
 *   exact size (an upper bound on a file with CRLFs), and only when it fits: a `replaceAll` that
 *   would grow a file past the limit allocates nothing, and a list of growing edits is refused at
 *   the first edit that would pass it;
 * - an edit that would take the call past {@link MAX_EDIT_SCAN_BYTES} of text searched is `FS_TOO_LARGE` before it searches.
 *
 * Time and memory are thus linear in the file (the peak is the input, one intermediate text, the
 * output, and on a file with CRLFs an LF copy of the text), and the work is cut in slices of a few
 * milliseconds: run the steps with {@link runEditFor} (synchronously, within a time budget) or
 * {@link runEditSliced} (giving the event loop a turn between slices, checking a signal).
 *
 * While the text has no CRLF the matches of `oldString`'s bytes are the matches of the text (valid
 * UTF-8 is self-synchronizing) and the spliced bytes are the encoding of the spliced text. With a
 * CRLF, matching is on an LF copy of the bytes, and the splice walks the raw bytes: untouched
 * regions keep their bytes, inserted text takes the dominant line ending of the first 4096
 * characters — exactly what {@link applyLiteralEdit} does on strings.
 */
export function* editSteps(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes = STRING_CEILING): EditSteps {
  if (bytes.length > maxBytes) throw FsError.tooLarge('edit', path, bytes.length, maxBytes)
  if (bytes.length <= editTuning.small) assertText(bytes, path, 'edit')
  else yield* assertTextSteps(bytes, path, 'edit', editTuning.validate)
  const start = hasUtf8Bom(bytes) ? 3 : 0
  const many = Array.isArray(edits)
  const count = many ? edits.length : 1
  const budget: Budget = { matches: MAX_EDIT_MATCHES, scan: MAX_EDIT_SCAN_BYTES }
  let current = bytes
  for (let i = 0; i < count; i++) {
    const edit = many ? (edits[i] as FsEditRequest) : (edits as FsEditRequest)
    try {
      const oldLf = normalizeLf(edit.oldString)
      if (oldLf === '') throw new FsError('FS_EDIT_NOT_FOUND', 'oldString must be a non-empty string')
      const size = current.length - start
      if (i > 0 && size > budget.scan) {
        const scanned = MAX_EDIT_SCAN_BYTES - budget.scan
        throw FsError.at(
          'FS_TOO_LARGE',
          'edit',
          path,
          `this edit would take the call past ${MAX_EDIT_SCAN_BYTES} bytes of text searched (${scanned} so far, ${size} more; each edit searches the whole text): split the edits into several calls`,
          { details: { size: scanned + size, limit: MAX_EDIT_SCAN_BYTES } },
        )
      }
      budget.scan -= size
      const small = current.length <= editTuning.small ? spliceSmall(current, start, oldLf, edit, path, maxBytes, budget) : undefined
      current = small ?? (yield* editStep(current, start, oldLf, edit, path, maxBytes, budget))
    } catch (err) {
      throw many ? whichEdit(err, i, count, path) : err
    }
    // Between the edits of a list: a point where the driver may look at the clock.
    if (i + 1 < count) yield
  }
  return new ByteEditResult(bytes, start, current)
}

/** The edit pipeline of {@link editSteps}, run to the end synchronously, whatever it takes. */
export function editTextBytes(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes = STRING_CEILING): ByteEditResult {
  const steps = editSteps(bytes, edits, path, maxBytes)
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/**
 * Runs `steps` synchronously until they end or `budgetMs` has passed: the result, or `undefined`
 * when there is more to do (the steps keep their state: go on with {@link runEditSliced}).
 * Time is read between slices only, so it may run over by one slice (a few milliseconds).
 */
export function runEditFor<T>(steps: EditSteps<T>, budgetMs: number): { readonly value: T } | undefined {
  const started = performance.now()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return { value: step.value }
    if (performance.now() - started >= budgetMs) return undefined
  }
}

/** The longest stretch {@link runEditSliced} runs before it gives the event loop a turn. */
export const EDIT_SLICE_MS = 10

/**
 * Runs `steps` to the end, giving the event loop a turn (`setImmediate`) whenever
 * {@link EDIT_SLICE_MS} have passed (and first, with `turnFirst`), and checking `signal` after
 * each turn: an abort is `FS_ABORTED` (`<verb> aborted`) and the steps are dropped.
 */
export async function runEditSliced<T>(steps: EditSteps<T>, signal: AbortSignal | undefined, verb: FsVerb = 'edit', turnFirst = false): Promise<T> {
  if (turnFirst) {
    // A whole turn of the loop (timers, I/O, immediates): the steps come from a synchronous run that used its budget.
    await new Promise<void>((resolve) => setTimeout(resolve, 0))
  }
  throwIfAborted(signal, verb)
  let started = performance.now()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (performance.now() - started >= EDIT_SLICE_MS) {
      await nextTurn()
      throwIfAborted(signal, verb)
      started = performance.now()
    }
  }
}

/** Resolves after the event loop has had a turn: run from an immediate, the next one comes after the timers and I/O. */
const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * {@link editSteps} run with {@link runEditSliced}: the edit pipeline on bytes already read,
 * without holding the event loop, e.g. to show what an edit would do (the tools' dry run).
 * `maxBytes` is the `maxTextBytes` of the filesystem the bytes came from.
 */
export async function editTextBytesSliced(
  bytes: Uint8Array,
  edits: FsEditRequest | readonly FsEditRequest[],
  path: string,
  options: { readonly maxBytes: number; readonly signal?: AbortSignal | undefined },
): Promise<ByteEditResult> {
  assertEditRequests(edits)
  return runEditSliced(editSteps(bytes, edits, path, options.maxBytes), options.signal)
}

/**
 * One edit of a small text without CRLF (at most `editTuning.small`), in one synchronous run: the
 * same matches and bytes as {@link editStep}, without its slices (a small edit is most edits, and
 * slicing costs a small edit more than the edit itself). `undefined` when the text has a CRLF or
 * more than `editTuning.smallMatches` matches: {@link editStep} then does the edit.
 */
function spliceSmall(
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
  return out
}

/** One edit on `current` (the BOM, if any, is its first `start` bytes), in slices: the new bytes, or the edit's failure. */
function* editStep(
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
    return yield* spliceLf(raw, found, needle.length, replacement, raw.length + found.count * growth)
  }
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

/** `err` of edit `i` of `n`, saying which: `cannot edit "<path>": edit 2 of 3: oldString was not found`. */
function whichEdit(err: unknown, i: number, n: number, path: string): unknown {
  if (!(err instanceof FsError)) return err
  const head = `cannot edit "${path}": `
  const reason = err.message.startsWith(head) ? err.message.slice(head.length) : err.message
  return new FsError(err.code, `${head}edit ${i + 1} of ${n}: ${reason}`, {
    cause: err.cause,
    retryable: err.retryable,
    indeterminate: err.indeterminate,
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
