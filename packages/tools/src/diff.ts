import { changedLines, type FsChangedLines, type FsEditOutcome, type FsWriteOutcome } from '@seamfs/core'
import { lineHunkSteps, type LineHunk } from './line-diff.js'

/** The most lines (hunk headers included) a diff shows before its footer. */
export const DIFF_MAX_LINES = 120
/** The most UTF-8 bytes a diff shows before its footer. */
export const DIFF_MAX_BYTES = 8192
/** The most characters of one diff line shown; the rest is cut and marked. */
export const DIFF_MAX_LINE_CHARS = 500
/**
 * The most lines of each text the line diff is given: a changed region with more (a
 * `replace_all` all over a large file, two edits far apart) is diffed on its first lines only,
 * and the diff says it was cut there. Far more than a diff shows; it bounds the line arrays.
 */
export const DIFF_WINDOW_MAX_LINES = 25_000
/** Unchanged lines shown around each change. */
const CONTEXT = 3
/**
 * Past this many changed lines (far more than a diff shows) or this many milliseconds, the line
 * diff gives up and only the counts are shown: its cost grows with file size times change size.
 */
const MAX_EDIT_LENGTH = 1000
const DIFF_TIMEOUT_MS = 250
/** Characters compared at a time when looking for the common prefix and suffix, largest first (then one by one). */
const COMPARE_CHUNK = 4096
const COMPARE_SMALL_CHUNK = 64
/** Characters scanned (for line ends) or compared before the diff offers its caller a pause. */
const SLICE_CHARS = 4 * 1024 * 1024
/** How long {@link changeDiffAsync} runs before it gives the event loop a turn, in milliseconds. */
const SLICE_MS = 10

/** What the model reads of a change: the bounded unified diff, and the line counts of the whole change. */
export interface ChangeDiff {
  /** The hunks (`@@ -a,b +c,d @@` and `-`/`+`/` ` lines), cut to {@link DIFF_MAX_LINES} / {@link DIFF_MAX_BYTES} with a footer. */
  readonly text: string
  /**
   * Lines added and removed. When the diff gave up or was cut before the end of the change, the
   * lines of the changed region (with its context), as if the region was replaced.
   */
  readonly added: number
  readonly removed: number
  /** Whether the text leaves lines out. */
  readonly truncated: boolean
}

type Steps<T> = Generator<void, T, void>

/** The length of the common prefix of `a` and `b`, compared a chunk at a time (slices of flat strings are not copied). */
function* commonPrefix(a: string, b: string): Steps<number> {
  const n = Math.min(a.length, b.length)
  let p = 0
  let since = 0
  while (p + COMPARE_CHUNK <= n && a.slice(p, p + COMPARE_CHUNK) === b.slice(p, p + COMPARE_CHUNK)) {
    p += COMPARE_CHUNK
    if ((since += COMPARE_CHUNK) >= SLICE_CHARS) {
      since = 0
      yield
    }
  }
  while (p + COMPARE_SMALL_CHUNK <= n && a.slice(p, p + COMPARE_SMALL_CHUNK) === b.slice(p, p + COMPARE_SMALL_CHUNK)) p += COMPARE_SMALL_CHUNK
  while (p < n && a.charCodeAt(p) === b.charCodeAt(p)) p++
  return p
}

/** The length of the common suffix of `a` and `b`, at most `limit`. */
function* commonSuffix(a: string, b: string, limit: number): Steps<number> {
  const n = Math.min(a.length, b.length, limit)
  let s = 0
  let since = 0
  while (s + COMPARE_CHUNK <= n && a.slice(a.length - s - COMPARE_CHUNK, a.length - s) === b.slice(b.length - s - COMPARE_CHUNK, b.length - s)) {
    s += COMPARE_CHUNK
    if ((since += COMPARE_CHUNK) >= SLICE_CHARS) {
      since = 0
      yield
    }
  }
  const tail = (text: string, at: number): string => text.slice(text.length - at - COMPARE_SMALL_CHUNK, text.length - at)
  while (s + COMPARE_SMALL_CHUNK <= n && tail(a, s) === tail(b, s)) s += COMPARE_SMALL_CHUNK
  while (s < n && a.charCodeAt(a.length - 1 - s) === b.charCodeAt(b.length - 1 - s)) s++
  return s
}

/** How many `\n` lie in `text[from, to)`, counted a slice at a time. */
function* newlines(text: string, from: number, to: number): Steps<number> {
  let count = 0
  let sliceEnd = from + SLICE_CHARS
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) {
    count++
    if (i >= sliceEnd) {
      sliceEnd = i + SLICE_CHARS
      yield
    }
  }
  return count
}

/** The lines of `text[from, to)` (which ends at a line end or the text's end), each keeping its `\n`. */
function linesIn(text: string, from: number, to: number, cap: number): string[] {
  const lines: string[] = []
  for (let i = from; i < to && lines.length < cap;) {
    const nl = text.indexOf('\n', i)
    const end = nl === -1 || nl >= to ? to : nl + 1
    lines.push(text.slice(i, end))
    i = end
  }
  return lines
}

/** `line` as shown: at most {@link DIFF_MAX_LINE_CHARS} with its sign, then a mark; its `\n` is kept. */
function shownLine(line: string): string {
  const eol = line.endsWith('\n') ? 1 : 0
  if (line.length - eol < DIFF_MAX_LINE_CHARS) return line
  return `${line.slice(0, DIFF_MAX_LINE_CHARS - 1)} (line truncated)${eol === 1 ? '\n' : ''}`
}

/** The changed region of both texts, in whole lines, with {@link CONTEXT} lines around it. */
interface Window {
  /** Where the region starts in both texts (a line start), and how many lines come before it. */
  readonly from: number
  readonly skipped: number
  /** Where it ends in each text (a line end, or the text's end). */
  readonly toA: number
  readonly toB: number
}

/**
 * The region of the two texts that differs, in whole lines, as the line diff of the whole texts
 * sees it: the equal lines before (`head`) and after (`tail`, never overlapping `head`) are left
 * out, but {@link CONTEXT} of each side. Found by comparing characters, then moving to line
 * boundaries: nothing is split into lines but the region.
 */
function* windowOf(a: string, b: string): Steps<Window> {
  const prefix = yield* commonPrefix(a, b)
  // The lines wholly in the common prefix are equal; the line holding its end is not.
  const head = prefix === 0 ? 0 : a.lastIndexOf('\n', prefix - 1) + 1
  // The equal lines at the end, after the head lines in both texts.
  const suffix = yield* commonSuffix(a, b, Math.min(a.length, b.length) - head)
  let endA = a.length - suffix
  let endB = b.length - suffix
  const lineStart = (text: string, at: number): boolean => at === 0 || text.charCodeAt(at - 1) === 10
  if (!(lineStart(a, endA) && lineStart(b, endB))) {
    // Both texts continue alike from here: move to the first line end of that common text.
    const nl = a.indexOf('\n', endA)
    const move = nl === -1 ? a.length - endA : nl + 1 - endA
    endA += move
    endB += move
  }
  // Context: up to CONTEXT lines before, and after (from the common tail only).
  let from = head
  for (let k = 0; k < CONTEXT && from > 0; k++) from = from < 2 ? 0 : a.lastIndexOf('\n', from - 2) + 1
  for (let k = 0; k < CONTEXT && endA < a.length; k++) {
    const nl = a.indexOf('\n', endA)
    const move = nl === -1 ? a.length - endA : nl + 1 - endA
    endA += move
    endB += move
  }
  const skipped = yield* newlines(a, 0, from)
  return { from, skipped, toA: endA, toB: endB }
}

/** How many lines `text[from, to)` holds (the last one may lack its `\n`). */
function* lineCount(text: string, from: number, to: number): Steps<number> {
  if (to <= from) return 0
  return (yield* newlines(text, from, to)) + (text.charCodeAt(to - 1) === 10 ? 0 : 1)
}

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`)

/** A hunk's header and lines (already cut by {@link shownLine}). */
function hunkLines(hunk: LineHunk, skipped: number): string[] {
  // Unified-diff convention (as jsdiff's formatPatch): an empty side names the line before it.
  const start = (at: number, count: number): number => at + skipped - (count === 0 ? 1 : 0)
  const header = `@@ -${range(start(hunk.oldStart, hunk.oldLines), hunk.oldLines)} +${range(start(hunk.newStart, hunk.newLines), hunk.newLines)} @@`
  return [header, ...hunk.lines]
}

/** `lines` cut to the caps; the footer says how many were left out. */
function bounded(lines: readonly string[]): { text: string; truncated: boolean } {
  let bytes = 0
  let shown = 0
  for (const line of lines) {
    const size = Buffer.byteLength(line, 'utf8') + 1
    if (shown >= DIFF_MAX_LINES || bytes + size > DIFF_MAX_BYTES) break
    bytes += size
    shown++
  }
  const kept = lines.slice(0, shown).join('\n')
  if (shown === lines.length) return { text: kept, truncated: false }
  const left = lines.length - shown
  return { text: `${kept}\n(Diff cut: ${left} more ${left === 1 ? 'line' : 'lines'} not shown.)`, truncated: true }
}

/** The changed region of two texts as the line diff takes it. */
interface Region {
  /** Lines before the region, the same in both texts. */
  readonly skipped: number
  /** The region's first lines of each text (each keeping its `\n`), at most {@link DIFF_WINDOW_MAX_LINES}. */
  readonly a: string[]
  readonly b: string[]
  /** True when a side has more lines than given. */
  readonly cut: boolean
  /** The lines of the whole region in each text (`a`'s and `b`'s lengths when not cut). */
  counts(): Steps<{ readonly removed: number; readonly added: number }>
}

/** The region of two different texts (see {@link windowOf}): only the region's first lines are split out. */
function* regionOf(before: string, after: string): Steps<Region> {
  const w = yield* windowOf(before, after)
  const a = linesIn(before, w.from, w.toA, DIFF_WINDOW_MAX_LINES + 1)
  const b = linesIn(after, w.from, w.toB, DIFF_WINDOW_MAX_LINES + 1)
  const cut = a.length > DIFF_WINDOW_MAX_LINES || b.length > DIFF_WINDOW_MAX_LINES
  if (cut) {
    a.length = Math.min(a.length, DIFF_WINDOW_MAX_LINES)
    b.length = Math.min(b.length, DIFF_WINDOW_MAX_LINES)
  }
  return {
    skipped: w.skipped,
    a,
    b,
    cut,
    *counts() {
      if (!cut) return { removed: a.length, added: b.length }
      return { removed: yield* lineCount(before, w.from, w.toA), added: yield* lineCount(after, w.from, w.toB) }
    },
  }
}

/** The region core found on an outcome's bytes (see `changedLines`), or `undefined` when the texts are equal. */
function regionOfLines(changed: FsChangedLines): Region | undefined {
  if (changed.before === changed.after) return undefined
  const { before, after, beforeLines, afterLines } = changed
  const a = linesIn(before, 0, before.length, DIFF_WINDOW_MAX_LINES)
  const b = linesIn(after, 0, after.length, DIFF_WINDOW_MAX_LINES)
  const cut = beforeLines > DIFF_WINDOW_MAX_LINES || afterLines > DIFF_WINDOW_MAX_LINES
  return {
    skipped: changed.skipped,
    a,
    b,
    cut,
    // eslint-disable-next-line require-yield -- the counts are known: no step to take
    *counts() {
      return { removed: beforeLines, added: afterLines }
    },
  }
}

const NO_CHANGES: ChangeDiff = { text: '(No changes)', added: 0, removed: 0, truncated: false }

/**
 * The diff as resumable steps (see {@link changeDiff}): each step is a few milliseconds of work.
 * Memory: the two texts are never split whole; only the changed region's lines (at most
 * {@link DIFF_WINDOW_MAX_LINES} a side, substrings that share the texts' storage) and the
 * line diff's bounded state are held.
 */
export function* changeDiffSteps(before: string, after: string): Steps<ChangeDiff> {
  if (before === after) return NO_CHANGES
  return yield* regionDiffSteps(yield* regionOf(before, after))
}

/** The bounded diff of a changed region: its hunks, cut to the caps, or its counts when the line diff gives up. */
function* regionDiffSteps(region: Region): Steps<ChangeDiff> {
  const { a, b, cut, skipped } = region
  const shown = { before: a.map(shownLine), after: b.map(shownLine) }
  const found = yield* lineHunkSteps(a, b, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH, timeoutMs: DIFF_TIMEOUT_MS }, shown)
  // Cut: a hunk that reaches the last lines given may be an artifact of the cut (lines whose match lies past it).
  const hunks = cut ? found?.filter((h) => h.oldStart - 1 + h.oldLines < a.length - CONTEXT && h.newStart - 1 + h.newLines < b.length - CONTEXT) : found
  if (hunks === undefined || hunks.length === 0) {
    // Given up (or nothing shown before the cut): the counts of the whole region, counted without splitting it.
    const { removed, added } = yield* region.counts()
    return {
      text: `(Too many changes to show a diff: lines ${skipped + 1}-${skipped + removed} replaced by ${added} lines; read the file to see them.)`,
      added,
      removed,
      truncated: true,
    }
  }
  let added = 0
  let removed = 0
  const lines: string[] = []
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++
      else if (line.startsWith('-')) removed++
    }
    lines.push(...hunkLines(hunk, skipped))
  }
  const out = bounded(lines)
  if (!cut) return { ...out, added, removed }
  const last = hunks.at(-1) as LineHunk
  const through = skipped + last.oldStart - 1 + last.oldLines
  const note = `(Diff cut: the changed region is too large to diff whole; more changes may follow line ${through}: read the file to see them.)`
  const counts = yield* region.counts()
  return { text: `${out.text}\n${note}`, added: counts.added, removed: counts.removed, truncated: true }
}

/**
 * The bounded unified diff of a write's or an edit's outcome, as the `edit` and `write` tools show
 * it (hunks with three lines of context, no file headers, cut to {@link DIFF_MAX_LINES} lines and
 * {@link DIFF_MAX_BYTES} bytes with a footer): exactly the diff of its `before` and `after`,
 * computed from the region core finds on the outcome's bytes where it can (`changedLines`), so
 * that neither whole text is decoded or compared: the cost follows the change, not the file. The
 * line ends before the change (the hunk's line numbers) are counted by core while the store writes
 * an edit; a write's are counted here, with a native compare to find the change (both bounded by
 * the write's diff basis, `diffBasisMaxBytes`). Other outcomes are diffed
 * as texts (a write's `before` of `null` as the empty text: the tools show no diff for those).
 */
export async function diffOutcome(outcome: FsEditOutcome | FsWriteOutcome): Promise<ChangeDiff> {
  const changed = changedLines(outcome, { context: CONTEXT, maxLines: DIFF_WINDOW_MAX_LINES })
  // A write without a previous text (a create) has nothing to diff against: its diff is the empty text's.
  if (changed === undefined) return changeDiffAsync(outcome.before ?? '', outcome.after)
  const region = regionOfLines(changed)
  return region === undefined ? NO_CHANGES : runSliced(regionDiffSteps(region))
}

/**
 * The compact unified diff of `before` → `after` (LF-normalized texts, as core reports them): no
 * file headers (the result names the file), {@link CONTEXT} lines of context, bounded. Identical
 * texts give `(No changes)`; a change too large for the bounded line diff gives only its line
 * counts; a changed region of more than {@link DIFF_WINDOW_MAX_LINES} lines is diffed on its first
 * lines and says so. Time and memory are linear in the texts (a prefix and suffix compare, a count
 * of the lines before the change) plus the bounded line diff of the changed region.
 */
export function changeDiff(before: string, after: string): ChangeDiff {
  const steps = changeDiffSteps(before, after)
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/** {@link changeDiff}, giving the event loop a turn every few milliseconds (the tools' results use this). */
export function changeDiffAsync(before: string, after: string): Promise<ChangeDiff> {
  return runSliced(changeDiffSteps(before, after))
}

/** Runs `steps` to the end, giving the event loop a turn every {@link SLICE_MS}. */
async function runSliced<T>(steps: Steps<T>): Promise<T> {
  let started = performance.now()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (performance.now() - started >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      started = performance.now()
    }
  }
}
