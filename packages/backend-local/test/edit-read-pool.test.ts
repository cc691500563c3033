/**
 * Edits of files from 64 KiB to 16 MiB read into buffers the backend uses again (its read pool) and
 * lends to core, which keeps none of them past the edit's transform. Whatever edits run at once or
 * after, every outcome keeps its own file's texts and changed region, and every file gets its own edit.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { changedLines, isFsError, type FsEditOutcome, type FsEditRequest } from '@seamfs/core'
import { editTuning } from '../../core/src/edit-run.js'
import { POOLED_MAX_BYTES, POOLED_MIN_BYTES, ReadPool } from '../src/read-pool.js'

/** A file of `lines` numbered lines, each naming file `f`: two files never share a line. */
const fileText = (f: number, lines: number): string =>
  Array.from({ length: lines }, (_, i) => `file ${f} line ${String(i).padStart(6, '0')} ${'abcdefghij'.repeat(5)}\n`).join('')

const CONTEXT = { context: 3, maxLines: 100 }

let root: string
beforeEach(() => void (root = mkdtempSync(join(tmpdir(), 'seamfs-read-pool-'))))
afterEach(() => rmSync(root, { recursive: true, force: true }))

/** The same edit on memfs (whose bytes are never lent): what the outcome must be. */
async function expectedOf(text: string, edit: FsEditRequest | FsEditRequest[]): Promise<FsEditOutcome> {
  const memory = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': text } })
  return memory.editText(await memory.resolve('f.txt'), edit)
}

describe.each([
  ['in one run', {}],
  ['finished outside the critical section (no synchronous budget)', { slice: 4096, sync: 0 }],
])('edits of pooled reads, the edit engine %s', (_name, tuning) => {
  const saved = { ...editTuning }
  beforeEach(() => Object.assign(editTuning, tuning))
  afterEach(() => Object.assign(editTuning, saved))

  it('8 files edited at once, 3 rounds: each outcome keeps its own texts and changed lines, each file its edits', async () => {
    const files = 8
    const lines = 2500 // about 190 KiB: read into the pool's buffers
    const fs = new LocalFileSystem({ cwd: root })
    const texts = Array.from({ length: files }, (_, f) => fileText(f, lines))
    texts.forEach((text, f) => writeFileSync(join(root, `f${f}.txt`), text))
    const outcomes: { outcome: FsEditOutcome; before: string; edit: FsEditRequest | FsEditRequest[] }[] = []
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        texts.map(async (text, f) => {
          // A one-line change, a change of two far-apart lines, a replaceAll across the file: by file and round.
          const at = String(((f + 1) * 97 * (round + 1)) % lines).padStart(6, '0')
          const edit: FsEditRequest | FsEditRequest[] =
            (f + round) % 3 === 0
              ? { oldString: `file ${f} line ${at} `, newString: `file ${f} line ${at} r${round} `, replaceAll: false }
              : (f + round) % 3 === 1
                ? [
                    { oldString: `file ${f} line ${at} `, newString: `file ${f} line ${at} r${round} `, replaceAll: false },
                    { oldString: `file ${f} line 000001 `, newString: `file ${f} line 000001 r${round} `, replaceAll: false },
                  ]
                : { oldString: `abcdefghij\n`, newString: `abcdefghij r${round}\n`, replaceAll: true }
          const outcome = await fs.editText(await fs.resolve(`f${f}.txt`), edit)
          outcomes.push({ outcome, before: text, edit })
          texts[f] = (await expectedOf(text, edit)).after
        }),
      )
    }
    // Read only now, after every later edit read into the same buffers.
    for (const { outcome, before, edit } of outcomes) {
      const expected = await expectedOf(before, edit)
      expect(changedLines(outcome, CONTEXT)).toEqual(changedLines(expected, CONTEXT))
      expect(outcome.before === expected.before && outcome.after === expected.after).toBe(true)
    }
    texts.forEach((text, f) => expect(readFileSync(join(root, `f${f}.txt`), 'utf8') === text).toBe(true))
  })
})

it('an edit refused (no match, or a file that is not text) leaves the file as it was and the next edit whole', async () => {
  const fs = new LocalFileSystem({ cwd: root })
  const text = fileText(1, 2000)
  writeFileSync(join(root, 'a.txt'), text)
  const binary = Buffer.concat([Buffer.from(fileText(2, 2000)), Buffer.from([0, 0xff, 0xfe])])
  writeFileSync(join(root, 'b.bin'), binary)
  const missing = await fs.editText(await fs.resolve('a.txt'), { oldString: 'not there', newString: 'x', replaceAll: false }).catch((err: unknown) => err)
  expect(isFsError(missing, 'FS_EDIT_NOT_FOUND')).toBe(true)
  const notText = await fs
    .editText(await fs.resolve('b.bin'), { oldString: 'file 2 line 000005 ', newString: 'x', replaceAll: false })
    .catch((err: unknown) => err)
  expect(isFsError(notText, 'FS_NOT_TEXT')).toBe(true)
  expect(readFileSync(join(root, 'b.bin')).equals(binary)).toBe(true)
  const edit = { oldString: 'file 1 line 001000 ', newString: 'file 1 line 001000 changed ', replaceAll: false }
  const outcome = await fs.editText(await fs.resolve('a.txt'), edit)
  const expected = await expectedOf(text, edit)
  expect(changedLines(outcome, CONTEXT)).toEqual(changedLines(expected, CONTEXT))
  expect(outcome.before === text && outcome.after === expected.after).toBe(true)
  expect(readFileSync(join(root, 'a.txt'), 'utf8') === expected.after).toBe(true)
})

describe('the read pool', () => {
  afterEach(() => vi.useRealTimers())

  it('serves 64 KiB to 16 MiB, hands a buffer to one taker at a time, the smallest that fits and none far larger', () => {
    const pool = new ReadPool()
    expect(pool.take(POOLED_MIN_BYTES - 1)).toBeUndefined()
    expect(pool.take(POOLED_MAX_BYTES + 1)).toBeUndefined()
    const big = pool.take(8 * 1024 * 1024) as Buffer
    const small = pool.take(100 * 1024) as Buffer
    expect(small.length).toBeGreaterThanOrEqual(100 * 1024)
    pool.give(big)
    pool.give(small)
    // A small read does not take the 8 MiB buffer; the small one goes to one taker only.
    const first = pool.take(90 * 1024)
    expect(first).toBe(small)
    expect(pool.take(90 * 1024)).not.toBe(small)
    expect(pool.take(6 * 1024 * 1024)).toBe(big)
  })

  it('keeps at most 4 buffers and 32 MiB between edits, dropping the largest, and none after a second idle', () => {
    vi.useFakeTimers()
    const pool = new ReadPool()
    const taken = [1, 2, 3, 4, 5].map((mib) => pool.take(mib * 1024 * 1024) as Buffer)
    taken.forEach((buffer) => pool.give(buffer))
    expect(pool.size).toBe(4)
    // Three 12 MiB buffers are 36 MiB: one goes.
    const other = new ReadPool()
    const large = [12, 12, 12].map((mib) => other.take(mib * 1024 * 1024) as Buffer)
    large.forEach((buffer) => other.give(buffer))
    expect(other.size).toBe(2)
    vi.advanceTimersByTime(999)
    expect(pool.size).toBeGreaterThan(0)
    vi.advanceTimersByTime(2)
    expect(pool.size).toBe(0)
  })
})
