/**
 * Where the two texts of a write's or an edit's outcome differ, in whole lines, found on the
 * bytes core already holds: what a diff needs, at a cost that follows the change, not the file.
 */
import { Buffer } from 'node:buffer'
import type { KeptBytes } from './edit-engine.js'
import type { DetachedInput } from './edit-run.js'
import { countLineEnds, LineEndTally } from './line-ends.js'
import { asBuffer, hasUtf8Bom, textOf } from './text.js'
import type { FsEditOutcome, FsWriteOutcome } from './types.js'

/** The region of two texts that differs, in whole lines, with unchanged lines around it. */
export interface FsChangedLines {
  /** How many lines come before the region (the same lines in both texts). */
  readonly skipped: number
  /**
   * The region's first lines in the text before and after (LF-normalized, without BOM, each line
   * with its `\n` but the text's last line when it has none): at most `maxLines` lines each.
   * Equal only when the two texts are equal (both empty then, `skipped` 0).
   */
  readonly before: string
  readonly after: string
  /** How many lines the region holds in each text, also past `maxLines`. */
  readonly beforeLines: number
  readonly afterLines: number
}

/** What {@link changedLines} is asked for. */
export interface ChangedLinesOptions {
  /** Unchanged lines kept before and after the change (where the texts have them). */
  readonly context: number
  /** The most lines of each side's region returned as text (the counts cover the whole region). */
  readonly maxLines: number
}

/** The two byte texts an outcome was built from, each from its `start` on (past a BOM). */
interface ByteTexts {
  readonly before: Buffer
  readonly after: Buffer
  /** What the edit engine knows: bytes equal at the start and end of both, and whether `before` is free of CRLF. */
  readonly kept: { readonly head: number; readonly tail: number; readonly lf: boolean } | undefined
  /** The line ends of `before`'s bytes ahead of the change, counted meanwhile; `beforeStart` is where `before` starts in them. */
  readonly tally: LineEndTally | undefined
  readonly beforeStart: number
}

/**
 * An edit's texts once its input was let go (`ByteEditResult.detach`): the output, BOM included,
 * and the input as the output's ends around a copy of its changed middle. Its input had no CRLF.
 */
interface DetachedTexts {
  readonly detached: DetachedInput
  readonly after: Buffer
  /** The BOM's length in both texts (3 or 0): the input's. */
  readonly start: number
  readonly tally: LineEndTally | undefined
}

const sources = new WeakMap<object, ByteTexts | DetachedTexts>()

/**
 * Records the bytes `outcome`'s texts were decoded from, so that {@link changedLines} can answer
 * without building either text. Core calls it when it builds an outcome; the bytes must not change.
 * `bom` is where each text starts: an edit's texts both start past the BOM the file had (an edit
 * that writes U+FEFF at the start of a file without one writes text, not a BOM); a write's each past its own.
 */
export function recordOutcomeBytes(
  outcome: object,
  before: Uint8Array,
  after: Uint8Array,
  bom: 'input' | 'each',
  kept?: KeptBytes,
  tally?: LineEndTally,
): void {
  const start = (bytes: Uint8Array): number => (hasUtf8Bom(bytes) ? 3 : 0)
  const startBefore = start(before)
  const startAfter = bom === 'input' ? startBefore : start(after)
  sources.set(outcome, {
    before: asBuffer(before).subarray(startBefore),
    after: asBuffer(after).subarray(startAfter),
    // The engine's offsets count the BOM; the texts here start past it.
    kept: kept === undefined ? undefined : { head: Math.max(0, kept.head - startBefore), tail: kept.tail, lf: kept.lf },
    tally,
    beforeStart: startBefore,
  })
}

/**
 * Records an edit's outcome whose input was let go (see {@link DetachedTexts}): `changedLines` then
 * looks at the few lines around the change, which the output and the kept middle hold.
 */
export function recordDetachedOutcome(outcome: object, detached: DetachedInput, after: Uint8Array, tally: LineEndTally | undefined): void {
  sources.set(outcome, { detached, after: asBuffer(after), start: detached.start, tally })
}

/**
 * The texts {@link changedLines} needs of a detached edit: the same lines of both texts, from
 * `context` lines above the line where the engine's change begins (both texts share the bytes
 * before it) to as near their ends as keeps the answer that of the whole texts, from the output and
 * the kept middle; the line number comes from the tally of the output, which counts from the text's
 * start. Where the change could sit elsewhere too (a line added in a run of equal lines), the whole
 * texts' common prefix and suffix run past the engine's ends: they are measured first (native
 * compares over the run), and the window reaches past both, and `context + 2` line ends past where
 * the region ends, or to the texts' end.
 */
function windowOf({ detached, after, start, tally }: DetachedTexts, context: number): ByteTexts {
  const b = after.subarray(start)
  const head = detached.head - start
  const middle = asBuffer(detached.middle)
  const tail = detached.tail
  const suffix = b.length - tail
  const aLength = head + middle.length + tail
  const shorter = Math.min(aLength, b.length)
  // The whole texts' common prefix and suffix, as changedLines measures them on the whole texts.
  const prefix = virtualPrefix(b, head, middle, suffix)
  const headLine = prefix === 0 ? 0 : b.lastIndexOf(10, prefix - 1) + 1
  const common = Math.min(virtualSuffix(b, head, middle, suffix, tail), shorter - headLine)
  // The region ends `common` bytes before each text's end: its context lies in the common suffix.
  let to = b.length - common
  for (let k = 0; k < context + 2 && to < b.length; k++) to = lineEndFrom(b, to)
  // Bytes left off both ends: never into the middle, and never the byte where the prefix ends.
  let cut = Math.min(tail, b.length - to)
  if (prefix >= shorter) cut = 0
  else cut = Math.min(cut, shorter - prefix - 1)
  let from = head === 0 ? 0 : b.lastIndexOf(10, head - 1) + 1
  for (let k = 0; k < context && from > 0; k++) from = from < 2 ? 0 : b.lastIndexOf(10, from - 2) + 1
  const end = b.length - cut
  return {
    before: Buffer.concat([b.subarray(from, head), middle, b.subarray(suffix, end)]),
    after: b.subarray(from, end),
    kept: { head: head - from, tail: tail - cut, lf: true },
    tally: tally ?? new LineEndTally(after, detached.head),
    beforeStart: start + from,
  }
}

/** The common prefix of `b` and the text before it (`b[0, head)`, `middle`, `b[suffix, …)`), at least `head`. */
function virtualPrefix(b: Buffer, head: number, middle: Buffer, suffix: number): number {
  const inMiddle = commonPrefix(middle, b.subarray(head), 0)
  if (inMiddle < middle.length) return head + inMiddle
  // The middle is all in `b` from `head`: past it the text before goes on as `b` from `suffix`.
  return head + middle.length + commonPrefix(b.subarray(suffix), b.subarray(head + middle.length), 0)
}

/** The common suffix of `b` and the text before it (see {@link virtualPrefix}), at least `tail`, unbounded by the prefix. */
function virtualSuffix(b: Buffer, head: number, middle: Buffer, suffix: number, tail: number): number {
  const inMiddle = commonSuffix(middle, b.subarray(0, suffix), Number.POSITIVE_INFINITY, 0)
  if (inMiddle < middle.length) return tail + inMiddle
  // Before the middle the text before goes on as `b` up to `head`.
  return tail + middle.length + commonSuffix(b.subarray(0, head), b.subarray(0, suffix - middle.length), Number.POSITIVE_INFINITY, 0)
}

const CRLF = Buffer.from('\r\n')
/**
 * Bytes compared at a time when looking for the common prefix and suffix, largest first: each
 * size runs until a chunk differs, then the next size takes over from there (one native compare
 * a chunk; the last few bytes one by one). A size a quarter of the one before: past the first, each
 * takes at most three compares, so a change a few KiB in costs a dozen compares, not dozens.
 */
const COMPARE_CHUNKS = [64 * 1024, 16 * 1024, 4096, 1024, 256, 64, 16] as const

/** True when `bytes` hold a CRLF (one native scan for the CR settles most files). */
const hasCrlf = (bytes: Buffer): boolean => bytes.indexOf(13) !== -1 && bytes.indexOf(CRLF) !== -1

/** Line ends counted at once when a write's change is found early (the rest in the background). */
const EARLY_COUNT_BYTES = 2 * 1024 * 1024

/** Below this many previous bytes, a write's change is found when its diff asks (a few microseconds): nothing early. */
const EARLY_BASIS_MIN_BYTES = 64 * 1024

/**
 * What a write's diff needs of its two byte texts, found while the store writes (`WriteRequest.onBefore`):
 * the bytes equal at both ends, found one event-loop turn after the store handed the previous bytes
 * over (once its publication's I/O is under way), and the line ends ahead of the change, counted in
 * the background from there ({@link LineEndTally}). {@link take} gives them to the outcome, finding
 * them at once if the write ended first.
 */
export class WriteBasis {
  readonly #before: Uint8Array
  readonly #after: Uint8Array
  #found: { readonly kept: KeptBytes; readonly tally: LineEndTally } | undefined
  readonly #immediate: ReturnType<typeof setImmediate> | undefined

  /** Starts on `before` (the previous bytes) and `after` (the bytes written); a small `before` waits to be asked. */
  constructor(before: Uint8Array, after: Uint8Array) {
    this.#before = before
    this.#after = after
    if (before.length >= EARLY_BASIS_MIN_BYTES) this.#immediate = setImmediate(() => this.#find()).unref()
  }

  /** The ends and the tally for {@link recordOutcomeBytes}, when `before` is the bytes this basis was started on. */
  take(before: Uint8Array): { readonly kept: KeptBytes; readonly tally: LineEndTally } | undefined {
    if (before !== this.#before || this.#immediate === undefined) return undefined
    clearImmediate(this.#immediate)
    return this.#find()
  }

  #find(): { readonly kept: KeptBytes; readonly tally: LineEndTally } {
    if (this.#found !== undefined) return this.#found
    const startBefore = hasUtf8Bom(this.#before) ? 3 : 0
    const a = asBuffer(this.#before).subarray(startBefore)
    const b = asBuffer(this.#after).subarray(hasUtf8Bom(this.#after) ? 3 : 0)
    const head = commonPrefix(a, b, 0)
    const tail = head === a.length && head === b.length ? 0 : commonSuffix(a, b, Math.min(a.length, b.length) - head, 0)
    // The kept bytes count the BOM, as the edit engine's do (see recordOutcomeBytes).
    const tally = new LineEndTally(this.#before, startBefore + head)
    // A first slice now, while the store writes; the rest in the background (or when asked).
    tally.upTo(Math.min(startBefore + head, EARLY_COUNT_BYTES))
    // Free of CRLF on both sides (one native scan each, now): the diff then need not scan them again.
    this.#found = { kept: { head: head + startBefore, tail, lf: !hasCrlf(a) && !hasCrlf(b) }, tally }
    return this.#found
  }
}

/**
 * The region where `outcome.before` and `outcome.after` differ, in whole lines, with up to
 * `context` unchanged lines on each side: the region a line diff of the two whole texts would
 * look at (the common leading lines and the common trailing lines left out, never overlapping),
 * found by comparing bytes and decoding only the region's first `maxLines` lines a side.
 *
 * Cost: a native compare up to the change from each end (for an edit, none: the engine knows
 * where it changed the bytes), a count of the line ends before the region (the line number the
 * diff's hunks show; for an edit, counted in the background while the store wrote it, see
 * `LineEndTally`), and the region itself; neither whole text is decoded. `undefined` when the outcome's bytes are not known (an outcome core did not build, a
 * write whose previous content was not fetched) or a text holds a CRLF, whose LF-normalized
 * lines are not its bytes': the caller then diffs `before` and `after` themselves.
 */
export function changedLines(outcome: FsEditOutcome | FsWriteOutcome, options: ChangedLinesOptions): FsChangedLines | undefined {
  const source = sources.get(outcome)
  if (source === undefined) return undefined
  const texts = 'detached' in source ? windowOf(source, options.context) : source
  const { before: a, after: b, kept } = texts
  // An edit's input the engine matched on its bytes has no CRLF, and its output differs only in the
  // region, whose lines are checked below; anything else is scanned (one native search for the CR).
  const lf = kept?.lf === true
  if (!lf && (hasCrlf(a) || hasCrlf(b))) return undefined
  const prefix = commonPrefix(a, b, kept?.head ?? 0)
  if (prefix === a.length && prefix === b.length) return { skipped: 0, before: '', after: '', beforeLines: 0, afterLines: 0 }
  // The lines wholly in the common prefix are equal; the line holding its end is not.
  const head = prefix === 0 ? 0 : a.lastIndexOf(10, prefix - 1) + 1
  // The equal lines at the end, after the head lines in both texts.
  const suffix = commonSuffix(a, b, Math.min(a.length, b.length) - head, kept?.tail ?? 0)
  let endA = a.length - suffix
  let endB = b.length - suffix
  const lineStart = (text: Buffer, at: number): boolean => at === 0 || text[at - 1] === 10
  if (!(lineStart(a, endA) && lineStart(b, endB))) {
    // Both texts continue alike from here: on to the first line end of that common text.
    const move = lineEndFrom(a, endA) - endA
    endA += move
    endB += move
  }
  let from = head
  for (let k = 0; k < options.context && from > 0; k++) from = from < 2 ? 0 : a.lastIndexOf(10, from - 2) + 1
  for (let k = 0; k < options.context && endA < a.length; k++) {
    const move = lineEndFrom(a, endA) - endA
    endA += move
    endB += move
  }
  const left = region(a, from, endA, options.maxLines)
  const right = region(b, from, endB, options.maxLines)
  // A CRLF the edit made (a lone CR before an inserted LF) lies in the region, which starts and ends at line ends.
  if (lf && (left.text.includes('\r\n') || right.text.includes('\r\n'))) return undefined
  // The line number: counted while the store wrote the edit, where core could (a BOM holds no line end).
  const skipped = texts.tally === undefined ? countLineEnds(a, 0, from) : texts.tally.upTo(texts.beforeStart + from)
  return { skipped, before: left.text, after: right.text, beforeLines: left.lines, afterLines: right.lines }
}

/** The offset just past the first `\n` at or after `at`, or the text's end. */
function lineEndFrom(text: Buffer, at: number): number {
  const nl = text.indexOf(10, at)
  return nl === -1 ? text.length : nl + 1
}

/** The length of the common prefix of `a` and `b`, known to be at least `known`: native compares a chunk at a time, then bytes. */
function commonPrefix(a: Buffer, b: Buffer, known: number): number {
  const n = Math.min(a.length, b.length)
  let p = Math.min(known, n)
  for (const chunk of COMPARE_CHUNKS) while (p + chunk <= n && a.compare(b, p, p + chunk, p, p + chunk) === 0) p += chunk
  while (p < n && a[p] === b[p]) p++
  return p
}

/** The length of the common suffix of `a` and `b`, at most `limit`, known to be at least `known` (or `limit`). */
function commonSuffix(a: Buffer, b: Buffer, limit: number, known: number): number {
  const n = Math.min(a.length, b.length, limit)
  let s = Math.min(known, n)
  for (const chunk of COMPARE_CHUNKS) {
    while (s + chunk <= n && a.compare(b, b.length - s - chunk, b.length - s, a.length - s - chunk, a.length - s) === 0) s += chunk
  }
  while (s < n && a[a.length - 1 - s] === b[b.length - 1 - s]) s++
  return s
}

/** `text[from, to)` (whole lines) as the text of its first `maxLines` lines, and how many lines it holds. */
function region(text: Buffer, from: number, to: number, maxLines: number): { text: string; lines: number } {
  // The end of the first `maxLines` lines, found line by line; the lines past it only counted.
  let cut = from
  let lines = 0
  while (lines < maxLines && cut < to) {
    cut = lineEndFrom(text, cut)
    lines++
  }
  cut = Math.min(cut, to)
  if (cut < to) lines += countLineEnds(text, cut, to) + (text[to - 1] === 10 ? 0 : 1)
  return { text: textOf(text.subarray(from, cut)), lines }
}
