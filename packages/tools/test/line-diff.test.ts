/**
 * The bounded line diff against the `diff` package (jsdiff) it replaces, which stays a
 * devDependency as the oracle: the same hunks for the same texts; for the tools' diff of the
 * trimmed window, a patch that turns `before` into `after` with minimal counts and consistent
 * headers; and giving up with counts, never growing, on pathological input.
 */
import { structuredPatch } from 'diff'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { changeDiff } from '../src/diff.js'
import { lineHunks, type LineHunk } from '../src/line-diff.js'

const SEED = 17_0

/** `text` in lines, each keeping its `\n`, as the tools split it. */
const linesOf = (text: string): string[] => (text === '' ? [] : text.split(/(?<=\n)/))

/** Texts from a small alphabet (many equal lines), sometimes without a final newline. */
const text = fc.tuple(fc.array(fc.constantFrom('a', 'b', 'c', 'd', '', 'a b'), { maxLength: 24 }), fc.boolean()).map(([lines, cut]) =>
  lines
    .map((line) => `${line}\n`)
    .join('')
    .slice(0, cut ? -1 : undefined),
)

/** `before` and an `after` that is either unrelated or a few edits of it. */
const pair = fc.oneof(
  fc.tuple(text, text),
  fc
    .tuple(text, fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom('a\n', 'e\n', 'b', '\n')), { minLength: 1, maxLength: 4 }))
    .map(([before, edits]): [string, string] => {
      const lines = linesOf(before)
      for (const [at, removed, inserted] of edits) lines.splice(at % (lines.length + 1), removed, ...(removed === 3 ? [] : [inserted]))
      return [before, lines.join('')]
    }),
)

const library = (before: string, after: string, context: number): LineHunk[] | undefined =>
  structuredPatch('a', 'b', before, after, undefined, undefined, { context })?.hunks.map(({ oldStart, oldLines, newStart, newLines, lines }) => ({
    oldStart,
    oldLines,
    newStart,
    newLines,
    lines,
  }))

const unbounded = { maxEditLength: Infinity, timeoutMs: 60_000 }

interface ParsedHunk {
  oldStart: number
  oldLines: number
  newStart: number
  newLines: number
  lines: string[]
}

/** The hunks of a `changeDiff` text (single-line ranges written `@@ -a +c @@`). */
function parse(diff: string): ParsedHunk[] {
  const hunks: ParsedHunk[] = []
  for (const line of diff.split('\n')) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(line)
    if (header) hunks.push({ oldStart: +header[1]!, oldLines: +(header[2] ?? 1), newStart: +header[3]!, newLines: +(header[4] ?? 1), lines: [] })
    else hunks.at(-1)!.lines.push(line)
  }
  return hunks
}

/** The hunk's body lines with their newlines back (none before a `\ No newline` mark). */
function sides(hunk: ParsedHunk): { old: string[]; new: string[] } {
  const old: string[] = []
  const next: string[] = []
  hunk.lines.forEach((line, i) => {
    if (line.startsWith('\\')) return
    const full = line.slice(1) + (hunk.lines[i + 1]?.startsWith('\\') ? '' : '\n')
    if (line[0] !== '+') old.push(full)
    if (line[0] !== '-') next.push(full)
  })
  return { old, new: next }
}

/** `before` with the hunks applied, each checked against the lines it replaces; throws on a mismatch. */
function apply(before: string, hunks: readonly ParsedHunk[]): string {
  const source = linesOf(before)
  const out: string[] = []
  let at = 0
  for (const hunk of hunks) {
    const { old, new: next } = sides(hunk)
    expect([old.length, next.length]).toEqual([hunk.oldLines, hunk.newLines])
    // An empty side names the line before it.
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1
    expect(start).toBeGreaterThanOrEqual(at)
    expect(hunk.newStart).toBe(out.length + start - at + (hunk.newLines === 0 ? 0 : 1))
    out.push(...source.slice(at, start))
    expect(source.slice(start, start + old.length)).toEqual(old)
    out.push(...next)
    at = start + old.length
  }
  return [...out, ...source.slice(at)].join('')
}

describe(`lineHunks equals jsdiff's structuredPatch (fast-check seed ${SEED})`, () => {
  it('the same hunks for the same texts, for contexts 0 to 4', () => {
    fc.assert(
      fc.property(pair, fc.integer({ min: 0, max: 4 }), ([before, after], context) => {
        expect(lineHunks(linesOf(before), linesOf(after), { context, ...unbounded })).toEqual(library(before, after, context))
      }),
      { numRuns: 3000, seed: SEED },
    )
  })

  it('the same hunks under the bound, and undefined just past it, as the library', () => {
    const a = Array.from({ length: 40 }, (_, i) => `${i % 3}\n`)
    const b = Array.from({ length: 40 }, (_, i) => `${i % 5}\n`)
    const expected = library(a.join(''), b.join(''), 3)!
    const removed = expected.flatMap((h) => h.lines).filter((l) => l.startsWith('-')).length
    const added = expected.flatMap((h) => h.lines).filter((l) => l.startsWith('+')).length
    const options = (maxEditLength: number) => ({ context: 3, maxEditLength, timeoutMs: 60_000 })
    expect(lineHunks(a, b, options(added + removed))).toEqual(expected)
    expect(lineHunks(a, b, options(added + removed - 1))).toBeUndefined()
    expect(structuredPatch('a', 'b', a.join(''), b.join(''), undefined, undefined, { context: 3, maxEditLength: added + removed - 1 })).toBeUndefined()
  })

  it('the edge cases: empty sides, a lost or gained final newline, blank lines', () => {
    const cases: [string, string][] = [
      ['', 'a\nb'],
      ['a\nb\n', ''],
      ['a', 'a\n'],
      ['a\n', 'a'],
      ['x\na', 'y\na'],
      ['\n\n\n', '\n\n'],
      ['a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n', 'a\nB\nc\nd\ne\nf\ng\nh\nI\nj\n'],
    ]
    for (const [before, after] of cases)
      expect(lineHunks(linesOf(before), linesOf(after), { context: 3, ...unbounded }), JSON.stringify([before, after])).toEqual(library(before, after, 3))
  })
})

describe(`changeDiff on the trimmed window (fast-check seed ${SEED + 1})`, () => {
  it('applies to before to give after, with the minimal counts and headers that match their lines', () => {
    fc.assert(
      fc.property(pair, ([before, after]) => {
        const diff = changeDiff(before, after)
        if (before === after) {
          expect(diff.text).toBe('(No changes)')
          return
        }
        expect(diff.truncated).toBe(false)
        expect(apply(before, parse(diff.text))).toBe(after)
        const reference = library(before, after, 3)!.flatMap((h) => h.lines)
        expect([diff.added, diff.removed]).toEqual([reference.filter((l) => l[0] === '+').length, reference.filter((l) => l[0] === '-').length])
      }),
      { numRuns: 3000, seed: SEED + 1 },
    )
  })
})

describe('pathological input gives up with the counts', () => {
  it('two texts of 100k short lines, every line different', () => {
    const before = Array.from({ length: 100_000 }, (_, i) => `a${i}\n`).join('')
    const after = Array.from({ length: 100_000 }, (_, i) => `b${i}\n`).join('')
    expect(changeDiff(before, after)).toEqual({
      text: '(Too many changes to show a diff: lines 1-100000 replaced by 100000 lines; read the file to see them.)',
      added: 100_000,
      removed: 100_000,
      truncated: true,
    })
  })

  it('two 1 MiB texts of mostly equal lines, changed every few lines, past the edit bound', () => {
    const line = (i: number, changed: boolean): string => `${changed && i % 7 === 3 ? 'CHANGED' : 'same line'} ${'x'.repeat(20)}\n`
    const count = Math.ceil(1024 ** 2 / line(0, false).length)
    const before = Array.from({ length: count }, (_, i) => line(i, false)).join('')
    const after = Array.from({ length: count }, (_, i) => line(i, true)).join('')
    const diff = changeDiff(before, after)
    expect([diff.truncated, diff.added === diff.removed, diff.added > 1000]).toEqual([true, true, true])
    expect(diff.text).toMatch(/^\(Too many changes to show a diff: lines 1-\d+ replaced by \d+ lines; read the file to see them\.\)$/)
  })

  it('a passed deadline gives up before searching', () => {
    expect(lineHunks(['a\n', 'b\n'], ['b\n', 'c\n'], { context: 3, maxEditLength: 1000, timeoutMs: -1 })).toBeUndefined()
  })
})
