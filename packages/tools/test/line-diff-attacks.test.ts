/**
 * Attacks on the bounded line diff: random texts beyond line-diff.test.ts (larger
 * alphabets, `\r` variants, long texts, wide contexts, random edit bounds) against jsdiff, and
 * inputs shaped to maximise time and memory under the tools' bounds (1000 changed lines, 250 ms).
 */
import { structuredPatch } from 'diff'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { changeDiff } from '../src/diff.js'
import { lineHunks, type LineHunk } from '../src/line-diff.js'

const SEED = 1717

const linesOf = (text: string): string[] => (text === '' ? [] : text.split(/(?<=\n)/))

const library = (before: string, after: string, context: number, maxEditLength?: number): LineHunk[] | undefined =>
  structuredPatch('a', 'b', before, after, undefined, undefined, { context, maxEditLength: maxEditLength ?? Infinity })?.hunks.map(
    ({ oldStart, oldLines, newStart, newLines, lines }) => ({ oldStart, oldLines, newStart, newLines, lines }),
  )

const unbounded = { maxEditLength: Infinity, timeoutMs: 60_000 }

/** Lines that differ only in `\r`, whitespace or a BOM, and lines that look like diff syntax. */
const LINE = fc.constantFrom(
  'a',
  'a\r',
  'b',
  'b\r',
  '',
  '\r',
  ' a',
  'a ',
  '\uFEFFa',
  '\\ No newline at end of file',
  '+a',
  '-a',
  '@@ -1 +1 @@',
  'é',
  'e\u0301',
  '😀',
)

const text = fc.tuple(fc.array(LINE, { maxLength: 120 }), fc.boolean()).map(([lines, cut]) =>
  lines
    .map((line) => `${line}\n`)
    .join('')
    .slice(0, cut ? -1 : undefined),
)

/** Unrelated texts, or a few splices of one, or one side without its final newline. */
const pair = fc.oneof(
  fc.tuple(text, text),
  fc
    .tuple(text, fc.array(fc.tuple(fc.nat(), fc.nat(6), fc.array(LINE, { maxLength: 5 })), { minLength: 1, maxLength: 8 }))
    .map(([before, edits]): [string, string] => {
      const lines = linesOf(before)
      for (const [at, removed, inserted] of edits) lines.splice(at % (lines.length + 1), removed, ...inserted.map((l) => `${l}\n`))
      return [before, lines.join('')]
    }),
  text.map((t): [string, string] => [t, t.endsWith('\n') ? t.slice(0, -1) : `${t}\n`]),
)

describe(`lineHunks against jsdiff on hostile random texts (seed ${SEED})`, () => {
  it('the same hunks for `\\r` variants, diff-looking lines and contexts 0 to 12', () => {
    fc.assert(
      fc.property(pair, fc.integer({ min: 0, max: 12 }), ([before, after], context) => {
        expect(lineHunks(linesOf(before), linesOf(after), { context, ...unbounded })).toEqual(library(before, after, context))
      }),
      { numRuns: 2000, seed: SEED },
    )
  })

  it('gives up exactly where jsdiff gives up, for any edit bound', () => {
    fc.assert(
      fc.property(pair, fc.integer({ min: 0, max: 40 }), ([before, after], maxEditLength) => {
        const ours = lineHunks(linesOf(before), linesOf(after), { context: 3, maxEditLength, timeoutMs: 60_000 })
        const theirs = library(before, after, 3, maxEditLength)
        expect(ours === undefined, `bound ${maxEditLength}`).toBe(theirs === undefined)
        if (ours !== undefined) expect(ours).toEqual(theirs)
      }),
      { numRuns: 2000, seed: SEED + 1 },
    )
  })

  it('the hunks rebuild `after` from `before` (a patch jsdiff applies, its line-ending guess off)', async () => {
    const { applyPatch } = await import('diff')
    fc.assert(
      fc.property(pair, fc.integer({ min: 0, max: 5 }), ([before, after], context) => {
        const hunks = lineHunks(linesOf(before), linesOf(after), { context, ...unbounded })!
        expect(
          applyPatch(
            before,
            { oldFileName: 'a', newFileName: 'b', oldHeader: '', newHeader: '', hunks: hunks.map((h) => ({ ...h, lines: [...h.lines] })) },
            { autoConvertLineEndings: false },
          ),
        ).toBe(after)
      }),
      { numRuns: 1000, seed: SEED + 2 },
    )
  })

  it('edge bounds: empty sides, maxEditLength 0, a timeout of 0', () => {
    expect(lineHunks([], [], { context: 3, maxEditLength: 0, timeoutMs: 0 })).toEqual([])
    expect(lineHunks(['a\n'], ['a\n'], { context: 3, maxEditLength: 0, timeoutMs: 1000 })).toEqual([])
    expect(lineHunks(['a\n'], ['b\n'], { context: 3, maxEditLength: 0, timeoutMs: 1000 })).toBeUndefined()
    expect(lineHunks(['a\n'], ['b\n'], { context: 3, maxEditLength: 2, timeoutMs: 1000 })).toEqual(library('a\n', 'b\n', 3, 2))
    expect(lineHunks([], ['x'], { context: 0, ...unbounded })).toEqual(library('', 'x', 0))
  })
})

/** Milliseconds `body` takes. */
function timed<T>(body: () => T): { value: T; ms: number } {
  const started = performance.now()
  const value = body()
  return { value, ms: performance.now() - started }
}

describe('inputs shaped to maximise time and memory under the tools bounds', () => {
  const N = 200_000
  const cases: Array<[string, () => [string, string]]> = [
    [
      '200k equal lines but one in the middle',
      () => {
        const lines = Array.from({ length: N }, () => 'same\n')
        const after = [...lines]
        after[N / 2] = 'other\n'
        return [lines.join(''), after.join('')]
      },
    ],
    [
      '200k alternating lines, shifted by one',
      () => {
        const a = Array.from({ length: N }, (_, i) => (i % 2 === 0 ? 'x\n' : 'y\n')).join('')
        return [a, `y\n${a}`]
      },
    ],
    [
      '200k equal lines with 499 scattered insertions and 500 deletions (just under the edit bound)',
      () => {
        const before = Array.from({ length: N }, (_, i) => `a ${i % 3}\n`)
        const after = [...before]
        for (let i = 0; i < 500; i++) after.splice(((i * 7919) % (after.length - 1)) + 1, 1)
        for (let i = 0; i < 499; i++) after.splice(((i * 104729) % after.length) + 1, 0, `b ${i}\n`)
        after[0] = 'first changed\n'
        after[after.length - 1] = 'last changed\n'
        return [before.join(''), after.join('')]
      },
    ],
    [
      '200k lines differing only in a trailing \\r, first and last changed',
      () => {
        const before = Array.from({ length: N }, (_, i) => `line ${i % 10}\n`).join('')
        return [before, before.replaceAll('\n', '\r\n')]
      },
    ],
    [
      '200k lines where one side has no final newline',
      () => {
        const before = Array.from({ length: N }, (_, i) => `l${i}\n`).join('')
        return [before, before.slice(0, -1)]
      },
    ],
    [
      'a few huge lines (1 MiB each) that differ in their last character',
      () => {
        const line = 'z'.repeat(1024 * 1024)
        return [`${line}a\n${line}b\n`, `${line}a\n${line}c\n`]
      },
    ],
  ]
  for (const [name, make] of cases) {
    it(`${name}: changeDiff ends within a second of its 250 ms budget, with counts that add up`, () => {
      const [before, after] = make()
      const { value: diff, ms } = timed(() => changeDiff(before, after))
      expect(ms).toBeLessThan(1500)
      expect(diff.added).toBeGreaterThan(0)
      expect(diff.added + diff.removed).toBeGreaterThan(0)
      expect(Buffer.byteLength(diff.text)).toBeLessThanOrEqual(8192 + 512)
      if (!diff.truncated) expect(diff.text).toMatch(/^@@ /)
    }, 20_000)
  }

  it('the search alone respects its deadline on the worst shape (every line equal but one diagonal of changes)', () => {
    const before = Array.from({ length: N }, () => 'a\n')
    const after = Array.from({ length: N }, (_, i) => (i % 400 === 0 ? 'b\n' : 'a\n'))
    for (const timeoutMs of [0, 50, 250]) {
      const { ms } = timed(() => lineHunks(before, after, { context: 3, maxEditLength: 1000, timeoutMs }))
      expect(ms, `timeout ${timeoutMs}`).toBeLessThan(timeoutMs + 400)
    }
  }, 20_000)
})
