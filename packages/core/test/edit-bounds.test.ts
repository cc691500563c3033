/**
 * The bounds of the edit: an edit, a list of edits, refuses what would pass
 * a limit BEFORE building it, its work is linear in the file and capped, and it never holds the
 * event loop for long: past a short synchronous budget it is finished outside the backend's
 * critical section, a slice at a time, abortable.
 */
import { resourceUsage } from 'node:process'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { isFsError, type FsEditRequest, type FsError } from '@seamfs/core/backend'
import { applyLiteralEdit, editTextBytes, editTextBytesSliced, editTuning, MAX_EDIT_MATCHES, MAX_EDIT_SCAN_BYTES } from '../src/edit.js'
import { UTF8_BOM, assertText, assertTextSteps, encodeText, hasNulInSample, hasUtf8Bom } from '../src/text.js'
import { concatBytes, expectFsErrorAsync, utf8 } from './helpers.js'
import { held, busy } from './event-loop.js'

const MiB = 1024 * 1024

/** The edit on strings (the reference), with the size limit checked after each edit, as the byte engine must refuse. */
function oracle(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], maxBytes: number): { before: string; after: string; bytes: Uint8Array } {
  if (bytes.length > maxBytes) throw Object.assign(new Error('too large'), { code: 'FS_TOO_LARGE' })
  if (hasNulInSample(bytes)) throw Object.assign(new Error('binary'), { code: 'FS_NOT_TEXT' })
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  const bom = hasUtf8Bom(bytes)
  const list = Array.isArray(edits) ? (edits as readonly FsEditRequest[]) : [edits as FsEditRequest]
  let stored = bom ? text.slice(1) : text
  let before: string | undefined
  let after = ''
  list.forEach((edit, i) => {
    const which = Array.isArray(edits) ? `edit ${i + 1} of ${list.length}` : ''
    let result
    try {
      result = applyLiteralEdit(stored, edit, 'f')
    } catch (err) {
      if (!isFsError(err)) throw err
      throw Object.assign(new Error(which), { code: err.code, details: Array.isArray(edits) ? { ...err.details, edit: i } : err.details })
    }
    if (encodeText(result.stored, bom).length > maxBytes) {
      throw Object.assign(new Error(which), { code: 'FS_TOO_LARGE', details: Array.isArray(edits) ? { edit: i } : undefined })
    }
    before ??= result.before
    after = result.after
    stored = result.stored
  })
  return { before: before as string, after, bytes: encodeText(stored, bom) }
}

type Outcome = { ok: true; before: string; after: string; bytes: number[] } | { ok: false; code: string; edit: unknown; matches: unknown }

function run(fn: () => { before: string; after: string; bytes: Uint8Array }): Outcome {
  try {
    const r = fn()
    return { ok: true, before: r.before, after: r.after, bytes: Array.from(r.bytes) }
  } catch (err) {
    const e = err as { code: string; details?: { edit?: unknown; matches?: unknown } }
    return { ok: false, code: e.code, edit: e.details?.edit, matches: e.code === 'FS_AMBIGUOUS_EDIT' ? e.details?.matches : undefined }
  }
}

const piece = fc.constantFrom('a', 'b', 'ab', 'é', '中', '🐂', '\n', '\r', '\r\n', '\uFEFF', ' ', 'aaaa')
const text = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''))
const file = fc.tuple(fc.boolean(), text).map(([bom, body]) => (bom ? concatBytes(UTF8_BOM, utf8(body)) : utf8(body)))
const needle = fc.array(piece, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(''))
const edit = fc.record({ oldString: needle, newString: text, replaceAll: fc.boolean() })
const edits = fc.oneof(edit, fc.array(edit, { minLength: 1, maxLength: 4 }))

describe('the sliced engine (slices of a few bytes) agrees with the edit on strings', () => {
  const saved = { ...editTuning }
  beforeEach(() => Object.assign(editTuning, { slice: 5, small: 0, smallMatches: 0, validate: 7 }))
  afterEach(() => Object.assign(editTuning, saved))

  it('on any text (BOM, CR, CRLF, U+FEFF, multi-byte), single edits and lists, with and without a size limit', () => {
    fc.assert(
      fc.property(file, edits, fc.integer({ min: 0, max: 120 }), fc.boolean(), (bytes, e, limit, limited) => {
        const maxBytes = limited ? limit : Number.MAX_SAFE_INTEGER
        expect(run(() => editTextBytes(bytes, e, 'f', maxBytes))).toEqual(run(() => oracle(bytes, e, maxBytes)))
      }),
      { numRuns: 3000, seed: 20260301 },
    )
  })

  it('with oldString taken from the file, so that it matches', () => {
    const arb = fc.tuple(file, fc.nat(), fc.integer({ min: 1, max: 6 }), text, fc.boolean(), fc.integer({ min: 0, max: 120 }))
    fc.assert(
      fc.property(arb, ([bytes, at, length, newString, replaceAll, maxBytes]) => {
        const body = new TextDecoder().decode(bytes)
        const from = at % Math.max(body.length, 1)
        const oldString = body.slice(from, from + length)
        fc.pre(oldString !== '' && oldString.isWellFormed())
        const e = { oldString, newString, replaceAll }
        expect(run(() => editTextBytes(bytes, e, 'f', maxBytes))).toEqual(run(() => oracle(bytes, e, maxBytes)))
      }),
      { numRuns: 3000, seed: 20260302 },
    )
  })

  it('run sliced (yielding to the event loop), the result is the same', async () => {
    const bytes = utf8('x\r\ny\r\nx\n'.repeat(50))
    const e = [
      { oldString: 'x\ny', newString: 'Z\nZ', replaceAll: true },
      { oldString: 'Z', newString: 'zz', replaceAll: true },
    ]
    const sliced = await editTextBytesSliced(bytes, e, 'f', { maxBytes: 1 << 20 })
    expect(Array.from(sliced.bytes)).toEqual(Array.from(oracle(bytes, e, 1 << 20).bytes))
  })
})

describe('the text check a slice at a time', () => {
  it('agrees with the whole check on any bytes (slices end on character boundaries)', () => {
    const bytes = fc.array(
      fc.oneof(fc.constantFrom(...[0x61, 0x0a, 0xc3, 0xa9, 0xe4, 0xb8, 0xad, 0xf0, 0x9f, 0x90, 0x82, 0x80, 0xff, 0x00]), fc.integer({ min: 0, max: 255 })),
      {
        maxLength: 40,
      },
    )
    fc.assert(
      fc.property(bytes, fc.integer({ min: 1, max: 9 }), (list, slice) => {
        const input = Uint8Array.from(list)
        const verdict = (fn: () => void): string => {
          try {
            fn()
            return 'ok'
          } catch (err) {
            return (err as FsError).message
          }
        }
        const sliced = (): void => {
          for (const _ of assertTextSteps(input, 'f', 'edit', slice));
        }
        expect(verdict(sliced)).toBe(verdict(() => assertText(input, 'f', 'edit')))
      }),
      { numRuns: 3000, seed: 20260303 },
    )
  })
})

/** Peak resident memory of the process so far, in bytes (never goes down). */
const peakRss = (): number => resourceUsage().maxRSS * 1024

describe('refused before the work: size, matches, text searched', () => {
  it('a 2 KB replaceAll that would build 1 GiB is FS_TOO_LARGE in milliseconds, allocating nothing near it', async () => {
    // 1 MiB of "ab": 524,288 matches of "a", each to grow by 2,047 bytes: 1 GiB. Counting stops past the limit.
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': 'ab'.repeat(MiB / 2) } })
    const target = await fs.resolve('f.txt')
    const version = (await fs.stat(target))?.version
    const peak = peakRss()
    const started = performance.now()
    const err = await expectFsErrorAsync(fs.editText(target, { oldString: 'a', newString: 'x'.repeat(2048), replaceAll: true }), 'FS_TOO_LARGE')
    const ms = performance.now() - started
    expect(err.details?.limit).toBe(fs.maxTextBytes)
    expect(err.details?.size).toBeGreaterThan(fs.maxTextBytes)
    expect(ms).toBeLessThan(1000)
    // The old engine allocated and filled the whole 1 GiB before looking at its size.
    expect(peakRss() - peak).toBeLessThan(128 * MiB)
    expect((await fs.stat(target))?.version).toBe(version)
  })

  it('a list of edits that each double the text is refused at the edit that would pass the limit', async () => {
    const limit = 256 * 1024
    const fs = new MemoryFileSystem({ cwd: '/w', maxTextBytes: limit, files: { 'f.txt': 'a'.repeat(1024) } })
    const target = await fs.resolve('f.txt')
    const doubling = Array.from({ length: 40 }, () => ({ oldString: 'a', newString: 'aa', replaceAll: true }))
    const peak = peakRss()
    const started = performance.now()
    const err = await expectFsErrorAsync(fs.editText(target, doubling), 'FS_TOO_LARGE')
    // 1 KiB · 2⁸ = 256 KiB fits; the 9th edit would make 512 KiB. The old engine went on to gigabytes.
    expect(err.details?.edit).toBe(8)
    expect(err.message).toMatch(/edit 9 of 40/)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(peakRss() - peak).toBeLessThan(64 * MiB)
    expect(await fs.readText(target)).toBe('a'.repeat(1024))
  })

  it(`a replaceAll of more than ${MAX_EDIT_MATCHES} matches is FS_TOO_LARGE; without replaceAll it is ambiguous, "more than"`, async () => {
    const body = 'a\n'.repeat(MAX_EDIT_MATCHES + 10)
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': body } })
    const target = await fs.resolve('f.txt')
    const many = await expectFsErrorAsync(fs.editText(target, { oldString: 'a', newString: 'b', replaceAll: true }), 'FS_TOO_LARGE')
    expect(many.message).toMatch(/more than 1000000 times/)
    expect(many.details).toEqual({ limit: MAX_EDIT_MATCHES })
    const ambiguous = await expectFsErrorAsync(fs.editText(target, { oldString: 'a', newString: 'b', replaceAll: false }), 'FS_AMBIGUOUS_EDIT')
    expect(ambiguous.message).toMatch(/more than 1000000 times and replaceAll is false/)
    // The budget is the call's: two edits of 600,000 matches each pass it at the second.
    const half = 'a\n'.repeat(600_000)
    await fs.writeText(target, half)
    const two = await expectFsErrorAsync(
      fs.editText(target, [
        { oldString: 'a', newString: 'b', replaceAll: true },
        { oldString: 'b', newString: 'a', replaceAll: true },
      ]),
      'FS_TOO_LARGE',
    )
    expect(two.details?.edit).toBe(1)
    expect(await fs.readText(target)).toBe(half)
  })

  it(`a list that would search more than ${MAX_EDIT_SCAN_BYTES} bytes of text is refused at the edit that would pass it, before it searches`, async () => {
    const size = 64 * MiB
    const body = Buffer.alloc(size, 'x')
    const markers = Array.from({ length: 17 }, (_, i) => `<${String(i).padStart(2, '0')}>`)
    body.write(markers.join(''), size - 4 * markers.length, 'latin1')
    const err = (() => {
      try {
        editTextBytes(
          body,
          markers.map((m) => ({ oldString: m, newString: m.toLowerCase(), replaceAll: false })),
          'f',
        )
      } catch (e) {
        return e as FsError
      }
      throw new Error('expected FS_TOO_LARGE')
    })()
    // 16 edits of 64 MiB are exactly 1 GiB; the 17th would pass it.
    expect([err.code, err.details?.edit, err.details?.limit]).toEqual(['FS_TOO_LARGE', 16, MAX_EDIT_SCAN_BYTES])
  })
})

describe('the event loop keeps turning, and an abort is honoured', () => {
  it('the measure sees a block (a synchronous busy loop of 150 ms of CPU)', async () => {
    const { maxMs } = await held(async () => busy(150))
    expect(maxMs).toBeGreaterThanOrEqual(150)
  })

  it('a list of replaceAll edits with a million matches in all, over 8 MiB, holds the loop < 100 ms at a time', async () => {
    // 100,000 pairs in 8 MB, swapped back and forth ten times: the old engine held the loop for seconds.
    const body = `ab${'x'.repeat(78)}`.repeat(100_000)
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': body } })
    const target = await fs.resolve('f.txt')
    const list = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? { oldString: 'ab', newString: 'ba' } : { oldString: 'ba', newString: 'ab' }))
    const { value, maxMs } = await held(() =>
      fs.editText(
        target,
        list.map((e) => ({ ...e, replaceAll: true })),
      ),
    )
    expect(maxMs).toBeLessThan(100)
    expect(value.after).toBe(body)
  })

  it('a list of replaceAll edits past the match budget (4 million matches each) is refused, holding the loop < 100 ms at a time', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': 'ab'.repeat(4 * MiB) } })
    const target = await fs.resolve('f.txt')
    const list = Array.from({ length: 100 }, (_, i) => ({ oldString: i % 2 === 0 ? 'a' : 'b', newString: i % 2 === 0 ? 'b' : 'a', replaceAll: true }))
    const started = performance.now()
    const { value, maxMs } = await held(() => expectFsErrorAsync(fs.editText(target, list), 'FS_TOO_LARGE'))
    expect(maxMs).toBeLessThan(100)
    expect(value.details?.edit).toBe(0)
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('a list of single-match edits over 32 MiB runs outside the critical section, a slice at a time', async () => {
    const body = Buffer.alloc(32 * MiB, 'x')
    const markers = Array.from({ length: 30 }, (_, i) => `<${String(i).padStart(2, '0')}>`)
    body.write(markers.join(''), body.length - 4 * markers.length, 'latin1')
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': body.toString('latin1') } })
    const target = await fs.resolve('f.txt')
    const list = markers.map((m) => ({ oldString: m, newString: m.toLowerCase(), replaceAll: false }))
    const { value, maxMs } = await held(() => fs.editText(target, list))
    expect(maxMs).toBeLessThan(100)
    expect(value.after.endsWith(markers.join('').toLowerCase())).toBe(true)
    expect((await fs.readText(target)).endsWith(markers.join('').toLowerCase())).toBe(true)
  })

  it('an abort during a long list is FS_ABORTED within a slice, and nothing is written', async () => {
    const body = Buffer.alloc(32 * MiB, 'x')
    const markers = Array.from({ length: 30 }, (_, i) => `<${String(i).padStart(2, '0')}>`)
    body.write(markers.join(''), body.length - 4 * markers.length, 'latin1')
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': body.toString('latin1') } })
    const target = await fs.resolve('f.txt')
    const version = (await fs.stat(target))?.version
    const list = markers.map((m) => ({ oldString: m, newString: m.toLowerCase(), replaceAll: false }))
    const controller = new AbortController()
    let abortedAt = 0
    setTimeout(() => {
      abortedAt = performance.now()
      controller.abort()
    }, 40)
    const err = await expectFsErrorAsync(fs.editText(target, list, { signal: controller.signal }), 'FS_ABORTED')
    expect(err.message).toBe('edit aborted')
    expect(performance.now() - abortedAt).toBeLessThan(100)
    expect((await fs.stat(target))?.version).toBe(version)
  })

  describe('an edit finished outside the critical section', () => {
    const saved = { ...editTuning }
    // Every edit goes outside: no synchronous budget, slices of a few bytes.
    beforeEach(() => Object.assign(editTuning, { sync: 0, slice: 8, small: 0 }))
    afterEach(() => Object.assign(editTuning, saved))

    /** A memory filesystem where another writer replaces the file after each of the first `races` edit attempts. */
    class Racing extends MemoryFileSystem {
      attempts = 0
      races = 0
      override updateBytes(...args: Parameters<MemoryFileSystem['updateBytes']>): ReturnType<MemoryFileSystem['updateBytes']> {
        this.attempts++
        try {
          return super.updateBytes(...args)
        } finally {
          if (this.attempts <= this.races) void this.writeText(args[0], `changed ${this.attempts}: <A><B>`)
        }
      }
    }
    const list = [
      { oldString: '<A>', newString: '<a>', replaceAll: false },
      { oldString: '<B>', newString: '<b>', replaceAll: false },
    ]

    it('is published by a second critical section when the file still holds the bytes it was computed from', async () => {
      const fs = new Racing({ cwd: '/w', files: { 'f.txt': 'x <A> y <B> z' } })
      const target = await fs.resolve('f.txt')
      const outcome = await fs.editText(target, list)
      expect([outcome.before, outcome.after, fs.attempts]).toEqual(['x <A> y <B> z', 'x <a> y <b> z', 2])
      expect((await fs.stat(target))?.version).toBe(outcome.version)
    })

    it('is computed again on the new content when the file changed meanwhile', async () => {
      const fs = new Racing({ cwd: '/w', files: { 'f.txt': 'x <A> y <B> z' } })
      fs.races = 1
      const target = await fs.resolve('f.txt')
      const outcome = await fs.editText(target, list)
      expect([outcome.before, outcome.after, fs.attempts]).toEqual(['changed 1: <A><B>', 'changed 1: <a><b>', 3])
      expect(await fs.readText(target)).toBe('changed 1: <a><b>')
    })

    it('is FS_STALE_VERSION (retryable) when the file keeps changing, and the last writer wins', async () => {
      const fs = new Racing({ cwd: '/w', files: { 'f.txt': 'x <A> y <B> z' } })
      fs.races = 3
      const target = await fs.resolve('f.txt')
      const err = await expectFsErrorAsync(fs.editText(target, list), 'FS_STALE_VERSION')
      expect(err.retryable).toBe(true)
      expect(await fs.readText(target)).toBe('changed 3: <A><B>')
    })

    it('a guarded edit whose file changed meanwhile is FS_STALE_VERSION', async () => {
      const fs = new Racing({ cwd: '/w', files: { 'f.txt': 'x <A> y <B> z' } })
      fs.races = 1
      const target = await fs.resolve('f.txt')
      const version = (await fs.stat(target))?.version
      await expectFsErrorAsync(fs.editText(target, list, { expected: { version: version! } }), 'FS_STALE_VERSION')
      expect(await fs.readText(target)).toBe('changed 1: <A><B>')
    })

    it('a failing edit is reported as it is, and nothing is written', async () => {
      const fs = new Racing({ cwd: '/w', files: { 'f.txt': 'x <A> y <B> z' } })
      const target = await fs.resolve('f.txt')
      const err = await expectFsErrorAsync(fs.editText(target, [...list, { oldString: 'nope', newString: '', replaceAll: false }]), 'FS_EDIT_NOT_FOUND')
      expect(err.details?.edit).toBe(2)
      expect([await fs.readText(target), fs.attempts]).toEqual(['x <A> y <B> z', 1])
    })
  })
})
