import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { isFsError, type FsEditRequest } from '@seamfs/core/backend'
import { applyLiteralEdit, editTextBytes } from '../src/edit.js'
import { UTF8_BOM, encodeText, hasNulInSample, hasUtf8Bom } from '../src/text.js'
import { concatBytes, utf8 } from './helpers.js'

/**
 * The edit pipeline as it was before the byte path: a fatal TextDecoder, then the text
 * edit on strings, then one encoding. `editTextBytes` must agree with it on every input.
 */
function oracle(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string): { before: string; after: string; bytes: Uint8Array } {
  if (hasNulInSample(bytes)) throw new Error('oracle: binary')
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  const list = Array.isArray(edits) ? (edits as readonly FsEditRequest[]) : [edits as FsEditRequest]
  let stored = text
  let before: string | undefined
  let after = ''
  list.forEach((edit, i) => {
    let result
    try {
      result = applyLiteralEdit(stored, edit, path)
    } catch (err) {
      if (!isFsError(err) || !Array.isArray(edits)) throw err
      throw Object.assign(new Error(`edit ${i + 1} of ${list.length}: ${err.message}`), { code: err.code, details: { ...err.details, edit: i } })
    }
    before ??= result.before
    after = result.after
    stored = result.stored
  })
  return { before: before as string, after, bytes: encodeText(stored, hasUtf8Bom(bytes)) }
}

type Outcome = { ok: true; before: string; after: string; bytes: number[] } | { ok: false; code: string; details: unknown; edit: string }

function run(fn: () => { before: string; after: string; bytes: Uint8Array }): Outcome {
  try {
    const r = fn()
    return { ok: true, before: r.before, after: r.after, bytes: Array.from(r.bytes) }
  } catch (err) {
    const e = err as { code: string; details?: unknown; message: string }
    // Which edit failed, as both say it ("edit N of M"), without the path prefix.
    return { ok: false, code: e.code, details: e.details, edit: /edit \d+ of \d+/.exec(e.message)?.[0] ?? '' }
  }
}

/** Pieces where bytes and text part ways: multi-byte and astral characters, CR, CRLF, U+FEFF. */
const piece = fc.constantFrom('a', 'b', 'ab', 'é', '中', '🐂', '\uE000', '\n', '\r', '\r\n', '\uFEFF', ' ')
const text = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''))
const file = fc.tuple(fc.boolean(), text).map(([bom, body]) => (bom ? concatBytes(UTF8_BOM, utf8(body)) : utf8(body)))
const needle = fc.array(piece, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(''))
const edit = fc.record({ oldString: needle, newString: text, replaceAll: fc.boolean() })

describe('editTextBytes: the byte path agrees with the text path', () => {
  it('on any text, BOM, CR, CRLF and U+FEFF included, for one edit', () => {
    fc.assert(
      fc.property(file, edit, (bytes, e) => {
        expect(run(() => editTextBytes(bytes, e, 'f'))).toEqual(run(() => oracle(bytes, e, 'f')))
      }),
      { numRuns: 2000 },
    )
  })

  it('for lists of edits, also when an edit turns a lone CR into a CRLF half way', () => {
    fc.assert(
      fc.property(file, fc.array(edit, { minLength: 1, maxLength: 4 }), (bytes, edits) => {
        expect(run(() => editTextBytes(bytes, edits, 'f'))).toEqual(run(() => oracle(bytes, edits, 'f')))
      }),
      { numRuns: 1000 },
    )
  })

  it('for edits whose oldString is taken from the file (so that they match)', () => {
    const arb = fc.tuple(file, fc.nat(), fc.integer({ min: 1, max: 6 }), text, fc.boolean())
    fc.assert(
      fc.property(arb, ([bytes, at, length, newString, replaceAll]) => {
        const body = new TextDecoder().decode(bytes)
        const from = at % Math.max(body.length, 1)
        const oldString = body.slice(from, from + length)
        fc.pre(oldString !== '' && oldString.isWellFormed())
        const e = { oldString, newString, replaceAll }
        expect(run(() => editTextBytes(bytes, e, 'f'))).toEqual(run(() => oracle(bytes, e, 'f')))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('editTextBytes: the rules, path by path', () => {
  const edited = (bytes: Uint8Array, e: FsEditRequest | readonly FsEditRequest[]): { before: string; after: string; stored: string } => {
    const r = editTextBytes(bytes, e, 'f')
    return { before: r.before, after: r.after, stored: Buffer.from(r.bytes).toString('latin1') }
  }

  it('an ASCII file with LF: the match is replaced exactly once, bytes around it kept', () => {
    const r = edited(utf8('one\ntwo\nthree\n'), { oldString: 'two', newString: 'TWO', replaceAll: false })
    expect(r).toEqual({ before: 'one\ntwo\nthree\n', after: 'one\nTWO\nthree\n', stored: 'one\nTWO\nthree\n' })
  })

  it('a non-ASCII file: matches by characters, never inside one', () => {
    const r = editTextBytes(utf8('é中🐂 é中'), { oldString: '中', newString: 'ж', replaceAll: true }, 'f')
    expect(Buffer.from(r.bytes).toString('utf8')).toBe('éж🐂 éж')
    expect(r.after).toBe('éж🐂 éж')
    expect(() => editTextBytes(utf8('é中🐂'), { oldString: '🐃', newString: 'x', replaceAll: false }, 'f')).toThrow(/not found/)
  })

  it('a CRLF file: edited with LF strings, inserted lines take CRLF, before/after are LF', () => {
    const r = edited(utf8('a\r\nb\r\nc\r\n'), { oldString: 'b\nc', newString: 'B\nC\nD', replaceAll: false })
    expect(r).toEqual({ before: 'a\nb\nc\n', after: 'a\nB\nC\nD\n', stored: 'a\r\nB\r\nC\r\nD\r\n' })
  })

  it('a BOM stays, is never part of the text, and a U+FEFF after it is text', () => {
    const bom = Buffer.from(UTF8_BOM).toString('latin1')
    expect(edited(concatBytes(UTF8_BOM, utf8('x=1\n')), { oldString: 'x=1', newString: 'x=2', replaceAll: false })).toEqual({
      before: 'x=1\n',
      after: 'x=2\n',
      stored: `${bom}x=2\n`,
    })
    const twice = concatBytes(UTF8_BOM, UTF8_BOM, utf8('y'))
    expect(edited(twice, { oldString: '\uFEFFy', newString: 'z', replaceAll: false })).toEqual({ before: '\uFEFFy', after: 'z', stored: `${bom}z` })
    // No BOM to match: the first one is not text.
    expect(() => editTextBytes(concatBytes(UTF8_BOM, utf8('y')), { oldString: '\uFEFFy', newString: 'z', replaceAll: false }, 'f')).toThrow(/not found/)
  })

  it('a U+FEFF inserted at the start of a file without BOM is text in after', () => {
    const r = editTextBytes(utf8('abc'), { oldString: 'a', newString: '\uFEFFa', replaceAll: false }, 'f')
    expect(r.after).toBe('\uFEFFabc')
    expect(Array.from(r.bytes.subarray(0, 3))).toEqual(Array.from(UTF8_BOM))
  })

  it('several matches without replaceAll: FS_AMBIGUOUS_EDIT with the count, on both paths', () => {
    for (const body of ['x x x\n', 'x x x\r\n']) {
      let caught: unknown
      try {
        editTextBytes(utf8(body), { oldString: 'x', newString: 'y', replaceAll: false }, 'f')
      } catch (err) {
        caught = err
      }
      expect(isFsError(caught, 'FS_AMBIGUOUS_EDIT')).toBe(true)
      expect((caught as { details?: unknown }).details).toEqual({ matches: 3 })
    }
  })

  it('a lone CR next to an inserted LF: stored as spliced, after LF-normalized', () => {
    const r = edited(utf8('a\rXb'), { oldString: 'X', newString: '\nY', replaceAll: false })
    expect(r).toEqual({ before: 'a\rXb', after: 'a\nYb', stored: 'a\r\nYb' })
  })

  it('invalid UTF-8 or a NUL is FS_NOT_TEXT before any edit', () => {
    for (const bytes of [Uint8Array.of(0x61, 0xc3), Uint8Array.of(0x61, 0, 0x62)]) {
      expect(() => editTextBytes(bytes, { oldString: 'a', newString: 'b', replaceAll: false }, 'f')).toThrow(/cannot edit "f"/)
      try {
        editTextBytes(bytes, { oldString: 'a', newString: 'b', replaceAll: false }, 'f')
      } catch (err) {
        expect(isFsError(err, 'FS_NOT_TEXT')).toBe(true)
      }
    }
  })

  it('builds before/after from the bytes it was given, when first read', () => {
    const bytes = utf8('keep this\n')
    const r = editTextBytes(bytes, { oldString: 'this', newString: 'that', replaceAll: false }, 'f')
    expect(r.before).toBe('keep this\n')
    expect(r.after).toBe('keep that\n')
    expect(r.before).toBe(r.before)
  })
})
