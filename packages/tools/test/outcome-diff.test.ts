/**
 * The diff of an edit's or a write's outcome is computed from the changed region core finds on
 * the outcome's bytes (`changedLines`), never from the two whole texts: it must be exactly the
 * diff of those texts, for every shape of text and change, and fall back to them where bytes and
 * LF-normalized text differ (a CRLF).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { changedLines, type FsEditOutcome, type FsEditRequest, type FsTarget, type FsVersion, type FsWriteOutcome } from '@seamfs/core'
import { FileSystemLayer, lendBytes, type UpdateRequest, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { editTuning } from '../../core/src/edit-run.js'
import { changeDiff, DIFF_WINDOW_MAX_LINES, diffOutcome } from '../src/diff.js'

/** Lines drawn from a small alphabet (so that edits find matches and lines repeat), with the shapes that trip byte/text mapping. */
const lineArb = fc.oneof(
  fc.constantFrom('a', 'b', 'a b', '', ' ', 'é', '€uro', '😀', 'x\ry', '\r', 'lone CR at end\r', '\uFEFF', 'same', 'same'),
  fc.string({ unit: fc.constantFrom('a', 'b', 'é', '\r', ' ', '😀'), maxLength: 6 }),
)
const textArb = fc
  .tuple(fc.array(lineArb, { maxLength: 40 }), fc.boolean(), fc.boolean())
  .map(([lines, trailingNewline, bom]) => `${bom ? '\uFEFF' : ''}${lines.join('\n')}${trailingNewline && lines.length > 0 ? '\n' : ''}`)

/** An edit of `text`: a piece of it (so that it matches), replaced by text from the same alphabet. */
const editArb = (text: string): fc.Arbitrary<FsEditRequest> =>
  fc
    .tuple(fc.nat({ max: Math.max(0, text.length - 1) }), fc.integer({ min: 1, max: 12 }), textArb, fc.boolean())
    .map(([at, length, replacement, replaceAll]) => ({ oldString: text.slice(at, at + length) || 'a', newString: replacement.slice(0, 30), replaceAll }))

/** The diff the tools showed before: the whole texts' diff. */
const textDiff = (outcome: FsEditOutcome | FsWriteOutcome): ReturnType<typeof changeDiff> => changeDiff(outcome.before ?? '', outcome.after)

describe.each([
  ['in one run (small files)', {}],
  ['in slices (the engine of large files, shrunk)', { slice: 5, small: 0, smallMatches: 0, validate: 7 }],
])('the diff of an outcome, from its bytes, with the edit engine %s', (_name, tuning) => {
  const saved = { ...editTuning }
  beforeEach(() => Object.assign(editTuning, tuning))
  afterEach(() => Object.assign(editTuning, saved))

  it('equals the diff of the whole texts after any edit or list of edits (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb.chain((text) => fc.tuple(fc.constant(text), editArb(text), editArb(text))),
        async ([text, first, second]) => {
          const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } })
          const target = await fs.resolve('f.txt')
          // Every match replaced (a unique match is rare in a small alphabet); `replaceAll: false` drawn means a list of two.
          const all = (edit: FsEditRequest): FsEditRequest => ({ ...edit, replaceAll: true })
          let outcome: FsEditOutcome
          try {
            outcome = await fs.editText(target, first.replaceAll ? all(first) : [all(first), all(second)])
          } catch {
            return // not found, or a refused edit: nothing to diff
          }
          expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
        },
      ),
      { seed: 20261202, numRuns: 400 },
    )
  })

  it('equals the diff of the whole texts after any overwrite (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(textArb, textArb, async (before, after) => {
        const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': before } })
        const outcome = await fs.writeText(await fs.resolve('f.txt'), after)
        expect(outcome.before).not.toBeNull()
        expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
      }),
      { seed: 20261203, numRuns: 400 },
    )
  })

  it('finds the region on the bytes where no CRLF is in either text, and leaves CRLF texts to the text diff', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'lf.txt': 'one\ntwo\nthree\n', 'crlf.txt': 'one\r\ntwo\r\nthree\r\n' } })
    const options = { context: 3, maxLines: 100 }
    const lf = await fs.editText(await fs.resolve('lf.txt'), { oldString: 'two', newString: 'TWO', replaceAll: false })
    expect(changedLines(lf, options)).toEqual({ skipped: 0, before: 'one\ntwo\nthree\n', after: 'one\nTWO\nthree\n', beforeLines: 3, afterLines: 3 })
    const crlf = await fs.editText(await fs.resolve('crlf.txt'), { oldString: 'two', newString: 'TWO', replaceAll: false })
    expect(changedLines(crlf, options)).toBeUndefined()
    expect((await diffOutcome(crlf)).text).toBe('@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three')
    // An outcome core did not build has no bytes: the texts are diffed.
    expect(changedLines({ ...lf }, options)).toBeUndefined()
    expect(await diffOutcome({ ...lf })).toEqual(await diffOutcome(lf))
  })

  it('a region past the line cap: its first lines as text, its whole line counts', async () => {
    const n = DIFF_WINDOW_MAX_LINES * 2
    const text = Array.from({ length: n }, (_, i) => `l${i}\n`).join('')
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } })
    const outcome = await fs.editText(await fs.resolve('f.txt'), { oldString: 'l', newString: 'L', replaceAll: true })
    const changed = changedLines(outcome, { context: 3, maxLines: DIFF_WINDOW_MAX_LINES })
    expect([changed?.beforeLines, changed?.afterLines, changed?.before.split('\n').length]).toEqual([n, n, DIFF_WINDOW_MAX_LINES + 1])
    expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
  })
})

/** A store that reads each edit into a buffer it lends to core (`lendBytes`) and overwrites the moment `transform` returns or throws. */
class Lending extends FileSystemLayer {
  lent = 0
  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return Promise.resolve(
      super.updateBytes(target, request, (bytes) => {
        const loan = lendBytes(Buffer.from(bytes))
        this.lent++
        try {
          return transform(loan)
        } finally {
          loan.fill(0xaa)
        }
      }),
    )
  }
}

describe.each([
  ['in one run (small files)', {}],
  ['in slices (the engine of large files, shrunk)', { slice: 5, small: 0, smallMatches: 0, validate: 7 }],
  ['finished outside the critical section (no synchronous budget)', { slice: 5, small: 0, smallMatches: 0, validate: 7, sync: 0 }],
])('an edit of bytes the store lent and overwrote at once, the edit engine %s', (_name, tuning) => {
  const saved = { ...editTuning }
  beforeEach(() => Object.assign(editTuning, tuning))
  afterEach(() => Object.assign(editTuning, saved))

  it('has the outcome, the diff and the file of the same edit of bytes kept as they were (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb.chain((text) => fc.tuple(fc.constant(text), editArb(text), editArb(text))),
        async ([text, first, second]) => {
          const edit: FsEditRequest | FsEditRequest[] = first.replaceAll
            ? first
            : [
                { ...first, replaceAll: true },
                { ...second, replaceAll: true },
              ]
          const kept = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } })
          const lending = new Lending(new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } }))
          const expected = await kept.editText(await kept.resolve('f.txt'), edit).catch((err: unknown) => err)
          const outcome = await lending.editText(await lending.resolve('f.txt'), edit).catch((err: unknown) => err)
          if (expected instanceof Error) {
            expect(outcome).toMatchObject({ code: (expected as { code?: string }).code })
            return
          }
          const made = outcome as FsEditOutcome
          expect(lending.lent).toBeGreaterThan(0)
          // The diff first (nothing decoded yet), then the texts.
          expect(await diffOutcome(made)).toEqual(await diffOutcome(expected as FsEditOutcome))
          expect([made.before, made.after]).toEqual([(expected as FsEditOutcome).before, (expected as FsEditOutcome).after])
          expect(await diffOutcome(made)).toEqual(textDiff(made))
          expect(await lending.readText(await lending.resolve('f.txt'))).toBe(await kept.readText(await kept.resolve('f.txt')))
        },
      ),
      { seed: 20261206, numRuns: 300 },
    )
  })
})

describe('the diff of an edit that could sit elsewhere too, over a store that lends its bytes', () => {
  /** Runs of equal lines (blank lines, closing braces): a line added or removed in one could be any of them. */
  const runArb = fc
    .tuple(
      fc.string({ unit: fc.constantFrom('a', 'b', '\n'), maxLength: 20 }),
      fc.constantFrom('\n', '}\n', 'ab\n', 'a', 'x\ny\n'),
      fc.integer({ min: 0, max: 60 }),
      fc.string({ unit: fc.constantFrom('a', 'b', '\n'), maxLength: 20 }),
    )
    .map(([before, unit, count, after]) => `${before}${unit.repeat(count)}${after}`)
    .filter((text) => text.length > 0)
  /** A piece of the text, replaced by itself with a part left out or doubled: the change can slide along a run. */
  const slideArb = (text: string): fc.Arbitrary<FsEditRequest> =>
    fc
      .tuple(fc.nat({ max: text.length - 1 }), fc.integer({ min: 1, max: 8 }), fc.nat(), fc.nat(), fc.boolean(), fc.boolean())
      .map(([at, length, c, d, cutOut, replaceAll]) => {
        const oldString = text.slice(at, at + length)
        const [i, j] = [c % (oldString.length + 1), d % (oldString.length + 1)].sort((x, y) => x - y) as [number, number]
        const newString = cutOut ? oldString.slice(0, i) + oldString.slice(j) : oldString.slice(0, j) + oldString.slice(i)
        return { oldString, newString, replaceAll }
      })

  it('is the diff of the whole texts (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        runArb.chain((text) => fc.tuple(fc.constant(text), slideArb(text))),
        async ([text, edit]) => {
          const lending = new Lending(new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } }))
          let outcome: FsEditOutcome
          try {
            outcome = await lending.editText(await lending.resolve('f.txt'), edit)
          } catch {
            return // not found, ambiguous or no change: nothing to diff
          }
          expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
        },
      ),
      { seed: 20261207, numRuns: 1500 },
    )
  })
})

describe('the line numbers of a large edit, counted while the store writes it', () => {
  /** 3 MiB of numbered lines: the part ahead of a change is counted in the background (above 64 KiB). */
  const lines = 48 * 1024
  const text = Array.from({ length: lines }, (_, i) => `${String(i).padStart(8, '0')} ${'.'.repeat(54)}\n`).join('')
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

  it.each([
    ['near the start', 5, false],
    ['past the first slices', 40_000, false],
    ['at the last line', lines - 1, false],
    ['near the start', 5, true],
    ['past the first slices', 40_000, true],
    ['at the last line', lines - 1, true],
  ])('are those of the whole texts for a change %s, asked for at once or after the count is done (bytes lent: %s)', async (_where, line, lent) => {
    const memory = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } })
    const fs = lent ? new Lending(memory) : memory
    const target = await fs.resolve('f.txt')
    const name = String(line).padStart(8, '0')
    const first = await fs.editText(target, { oldString: `${name} `, newString: `${name} changed `, replaceAll: false })
    // Asked for at once: whatever the background has not counted yet is counted now.
    const atOnce = await diffOutcome(first)
    expect(atOnce).toEqual(textDiff(first))
    expect(atOnce.text.split('\n')[0]).toBe(
      `@@ -${Math.max(1, line - 2)},${Math.min(line, 3) + 1 + Math.min(3, lines - 1 - line)} +${Math.max(1, line - 2)},${Math.min(line, 3) + 1 + Math.min(3, lines - 1 - line)} @@`,
    )
    const second = await fs.editText(target, { oldString: `${name} changed `, newString: `${name} `, replaceAll: false })
    for (let i = 0; i < 4; i++) await turn()
    expect(await diffOutcome(second)).toEqual(textDiff(second))
  })
})

describe('the diff of a large write, its change found while the store writes it', () => {
  /** The local disk, counting the previous bytes it hands to core before it publishes (`WriteRequest.onBefore`). */
  class Handing extends FileSystemLayer {
    handed = 0
    protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
      const onBefore = request.onBefore
      return Promise.resolve(
        super.publishBytes(target, bytes, {
          ...request,
          onBefore:
            onBefore &&
            ((before) => {
              this.handed++
              onBefore(before)
            }),
        }),
      )
    }
  }
  let dir: string
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'seamfs-write-diff-'))))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  const numbered = (lines: number, eol = '\n'): string =>
    Array.from({ length: lines }, (_, i) => `${String(i).padStart(8, '0')} ${'.'.repeat(54)}${eol}`).join('')
  const big = numbered(48 * 1024) // 3 MiB: the count ahead of a late change runs past its first slice
  const cases: [string, string, string][] = [
    ['a line changed near the start', big, big.replace('00000005 ', '00000005 changed ')],
    ['a line changed near the end', big, big.replace('00049000 ', '00049000 changed ')],
    ['lines added at the end', big, `${big}one more\nand another`],
    ['the first line removed', big, big.slice(big.indexOf('\n') + 1)],
    ['a BOM added', big, `\uFEFF${big}`],
    ['a BOM removed, a line changed', `\uFEFF${big}`, big.replace('00020000 ', '00020000 x ')],
    ['a CRLF written', big, big.replace('00030000 ', '00030000\r\n')],
    ['CRLF lines, one changed', numbered(2048, '\r\n'), numbered(2048, '\r\n').replace('00001000 ', '00001000 y ')],
    ['nothing changed', big, big],
  ]

  it.each(cases)('equals the diff of the whole texts: %s', async (_name, before, after) => {
    writeFileSync(join(dir, 'f.txt'), before)
    const fs = new Handing(new LocalFileSystem({ cwd: dir }))
    const outcome = await fs.writeText(await fs.resolve('f.txt'), after)
    expect(fs.handed).toBe(1)
    expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
  })

  it('equals the diff of the whole texts for drawn changes of a 256 KiB file (fixed seed)', async () => {
    const base = numbered(4096)
    writeFileSync(join(dir, 'f.txt'), base)
    const fs = new Handing(new LocalFileSystem({ cwd: dir }))
    const target = await fs.resolve('f.txt')
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: base.length }), fc.nat({ max: 200 }), textArb, async (at, cut, inserted) => {
        writeFileSync(join(dir, 'f.txt'), base)
        const outcome = await fs.writeText(target, base.slice(0, at) + inserted + base.slice(Math.min(base.length, at + cut)))
        expect(await diffOutcome(outcome)).toEqual(textDiff(outcome))
      }),
      { seed: 20261205, numRuns: 60 },
    )
  })
})
