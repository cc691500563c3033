import { lineHunks, type LineHunk } from './line-diff.js'

/** The most lines (hunk headers included) a diff shows before its footer. */
export const DIFF_MAX_LINES = 120
/** The most UTF-8 bytes a diff shows before its footer. */
export const DIFF_MAX_BYTES = 8192
/** The most characters of one diff line shown; the rest is cut and marked. */
export const DIFF_MAX_LINE_CHARS = 500
/** Unchanged lines shown around each change. */
const CONTEXT = 3
/**
 * Past this many changed lines (far more than a diff shows) or this many milliseconds, the line
 * diff gives up and only the counts are shown: its cost grows with file size times change size.
 */
const MAX_EDIT_LENGTH = 1000
const DIFF_TIMEOUT_MS = 250

/** What the model reads of a change: the bounded unified diff, and the line counts of the whole change. */
export interface ChangeDiff {
  /** The hunks (`@@ -a,b +c,d @@` and `-`/`+`/` ` lines), cut to {@link DIFF_MAX_LINES} / {@link DIFF_MAX_BYTES} with a footer. */
  readonly text: string
  readonly added: number
  readonly removed: number
  /** Whether the text leaves lines out. */
  readonly truncated: boolean
}

/** `text` in lines, each keeping its `\n`. */
function linesOf(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/)
}

/**
 * Only the changed middle of the two texts, with {@link CONTEXT} lines of margin on each side, and
 * the number of lines skipped before it: the diff then costs the size of the change, not the file.
 */
function changedWindow(before: string, after: string): { before: string[]; after: string[]; skipped: number } {
  const a = linesOf(before)
  const b = linesOf(after)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const from = Math.max(0, head - CONTEXT)
  const keepTail = Math.max(0, tail - CONTEXT)
  return { before: a.slice(from, a.length - keepTail), after: b.slice(from, b.length - keepTail), skipped: from }
}

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`)

function hunkLines(hunk: LineHunk, skipped: number): string[] {
  // Unified-diff convention (as jsdiff's formatPatch): an empty side names the line before it.
  const start = (at: number, count: number): number => at + skipped - (count === 0 ? 1 : 0)
  const header = `@@ -${range(start(hunk.oldStart, hunk.oldLines), hunk.oldLines)} +${range(start(hunk.newStart, hunk.newLines), hunk.newLines)} @@`
  return [header, ...hunk.lines.map((line) => (line.length > DIFF_MAX_LINE_CHARS ? `${line.slice(0, DIFF_MAX_LINE_CHARS)} (line truncated)` : line))]
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

/**
 * The compact unified diff of `before` → `after` (LF-normalized texts, as core reports them): no
 * file headers (the result names the file), {@link CONTEXT} lines of context, bounded. Identical
 * texts give `(No changes)`; a change too large for the bounded line diff gives only its line counts.
 */
export function changeDiff(before: string, after: string): ChangeDiff {
  if (before === after) return { text: '(No changes)', added: 0, removed: 0, truncated: false }
  const window = changedWindow(before, after)
  const hunks = lineHunks(window.before, window.after, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH, timeoutMs: DIFF_TIMEOUT_MS })
  if (hunks === undefined) {
    const removed = window.before.length
    const added = window.after.length
    return {
      text: `(Too many changes to show a diff: lines ${window.skipped + 1}-${window.skipped + removed} replaced by ${added} lines; read the file to see them.)`,
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
    lines.push(...hunkLines(hunk, window.skipped))
  }
  return { ...bounded(lines), added, removed }
}
