import { isUtf8 } from 'node:buffer'
import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { FsError } from '@seamfs/core/backend'
import {
  BINARY_SAMPLE_BYTES,
  UTF8_BOM,
  decodeText,
  decodeTextOrNull,
  encodeText,
  encodeWriteContent,
  hasNulInSample,
  hasUtf8Bom,
  normalizeLf,
} from '../src/text.js'
import { asciiBytes, concatBytes, expectFsError, utf8 } from './helpers.js'

/** Any well-formed string (full Unicode range, astral included). */
const wellFormed = fc.string({ unit: 'binary', maxLength: 64 }).filter((s) => s.isWellFormed())
/** Grapheme-based strings (combining sequences, emoji, …). */
const graphemes = fc.string({ unit: 'grapheme', maxLength: 32 })
const noNul = (s: string): boolean => !s.includes('\0')

const INVALID: readonly (readonly [string, readonly number[]])[] = [
  ['lone continuation byte 0x80', [0x80]],
  ['continuation byte 0xBF after ASCII', [0x61, 0xbf, 0x62]],
  ['overlong 2-byte 0xC0 0xAF', [0xc0, 0xaf]],
  ['overlong 2-byte 0xC1 0xBF', [0xc1, 0xbf]],
  ['overlong 3-byte 0xE0 0x80 0xAF', [0xe0, 0x80, 0xaf]],
  ['overlong 4-byte 0xF0 0x80 0x80 0xAF', [0xf0, 0x80, 0x80, 0xaf]],
  ['UTF-16 surrogate encoded 0xED 0xA0 0x80', [0xed, 0xa0, 0x80]],
  ['low surrogate encoded 0xED 0xBF 0xBF', [0xed, 0xbf, 0xbf]],
  ['code point above U+10FFFF 0xF4 0x90 0x80 0x80', [0xf4, 0x90, 0x80, 0x80]],
  ['lead byte 0xF5', [0xf5, 0x80, 0x80, 0x80]],
  ['byte 0xFE', [0xfe]],
  ['byte 0xFF', [0xff]],
  ['truncated trailing 3-byte sequence 0xE4 0xB8', [0x61, 0xe4, 0xb8]],
  ['truncated trailing 4-byte sequence 0xF0 0x9F 0x90', [0xf0, 0x9f, 0x90]],
  ['lead byte followed by ASCII 0xC3 0x41', [0xc3, 0x41]],
  ['3-byte lead interrupted 0xE4 0x41 0xB8', [0xe4, 0x41, 0xb8]],
]

describe('hasUtf8Bom / hasNulInSample', () => {
  it('detects the BOM only as the first three bytes', () => {
    expect(hasUtf8Bom(Uint8Array.of(0xef, 0xbb, 0xbf))).toBe(true)
    expect(hasUtf8Bom(Uint8Array.of(0xef, 0xbb, 0xbf, 0x61))).toBe(true)
    expect(hasUtf8Bom(Uint8Array.of(0xef, 0xbb))).toBe(false)
    expect(hasUtf8Bom(Uint8Array.of(0x61, 0xef, 0xbb, 0xbf))).toBe(false)
    expect(hasUtf8Bom(new Uint8Array(0))).toBe(false)
    expect(Array.from(UTF8_BOM)).toEqual([0xef, 0xbb, 0xbf])
  })

  it('looks for NUL in the first 8192 bytes only', () => {
    expect(BINARY_SAMPLE_BYTES).toBe(8192)
    for (const at of [0, 1, 4096, 8191]) {
      const bytes = asciiBytes(9000)
      bytes[at] = 0
      expect(hasNulInSample(bytes), `NUL at ${at}`).toBe(true)
    }
    for (const at of [8192, 8193, 8999]) {
      const bytes = asciiBytes(9000)
      bytes[at] = 0
      expect(hasNulInSample(bytes), `NUL at ${at}`).toBe(false)
    }
    expect(hasNulInSample(new Uint8Array(0))).toBe(false)
  })
})

describe('decodeText', () => {
  it('round-trips any well-formed string without NUL (a leading U+FEFF is the BOM)', () => {
    fc.assert(
      fc.property(fc.oneof(wellFormed, graphemes).filter(noNul), (s) => {
        const expected = s.startsWith('\uFEFF') ? s.slice(1) : s
        expect(decodeText(utf8(s), 'f.txt')).toBe(expected)
      }),
      { numRuns: 500 },
    )
  })

  it('round-trips exactly behind a BOM (only the first BOM is dropped)', () => {
    fc.assert(
      fc.property(fc.oneof(wellFormed, graphemes).filter(noNul), (s) => {
        expect(decodeText(concatBytes(UTF8_BOM, utf8(s)), 'f.txt')).toBe(s)
      }),
      { numRuns: 300 },
    )
    expect(decodeText(concatBytes(UTF8_BOM, UTF8_BOM, utf8('x')), 'f')).toBe('\uFEFFx')
  })

  it('drops a leading BOM, keeps U+FEFF elsewhere', () => {
    expect(decodeText(concatBytes(UTF8_BOM, utf8('hello')), 'f')).toBe('hello')
    expect(decodeText(UTF8_BOM, 'f')).toBe('')
    expect(decodeText(utf8('a\uFEFFb'), 'f')).toBe('a\uFEFFb')
    expect(decodeText(new Uint8Array(0), 'f')).toBe('')
  })

  it('decodes 1- to 4-byte characters', () => {
    expect(decodeText(Uint8Array.of(0x61, 0xc3, 0xa9, 0xe4, 0xb8, 0xad, 0xf0, 0x9f, 0x90, 0x82), 'f')).toBe('aé中🐂')
    expect(decodeText(Uint8Array.of(0xf4, 0x8f, 0xbf, 0xbf), 'f')).toBe('\u{10FFFF}')
    expect(decodeText(Uint8Array.of(0xef, 0xbf, 0xbd), 'f')).toBe('\uFFFD')
  })

  it('rejects a NUL at byte 0 and at byte 8191 with FS_NOT_TEXT', () => {
    for (const at of [0, 100, 8191]) {
      const bytes = asciiBytes(10_000)
      bytes[at] = 0
      const err = expectFsError(() => decodeText(bytes, 'bin.dat'), 'FS_NOT_TEXT')
      expect(err.message).toBe('cannot read "bin.dat": binary file')
    }
    expectFsError(() => decodeText(Uint8Array.of(0), 'f'), 'FS_NOT_TEXT')
  })

  it('accepts a NUL at byte 8192 and later, and keeps it in the text', () => {
    const bytes = asciiBytes(8193)
    bytes[8192] = 0
    const text = decodeText(bytes, 'f')
    expect(text.length).toBe(8193)
    expect(text.indexOf('\0')).toBe(8192)
  })

  it('counts the NUL sample in bytes, not characters (BOM included)', () => {
    // 3 BOM bytes + 8188 'a' = 8191 bytes, so the NUL sits at byte 8191.
    const atLimit = concatBytes(UTF8_BOM, asciiBytes(8188), [0])
    expectFsError(() => decodeText(atLimit, 'f'), 'FS_NOT_TEXT')
    const past = concatBytes(UTF8_BOM, asciiBytes(8189), [0])
    expect(decodeText(past, 'f')).toBe('a'.repeat(8189) + '\0')
    // 4096 two-byte characters fill bytes 0..8191; a NUL right after is at byte 8192.
    const twoByte = concatBytes(utf8('é'.repeat(4096)), [0])
    expect(decodeText(twoByte, 'f')).toBe('é'.repeat(4096) + '\0')
  })

  it.each(INVALID)('rejects %s with FS_NOT_TEXT', (_name, bytes) => {
    const err = expectFsError(() => decodeText(Uint8Array.from(bytes), 'bad.txt'), 'FS_NOT_TEXT')
    expect(err.message).toBe('cannot read "bad.txt": invalid UTF-8 text')
    expect(err.cause).toBeDefined()
    expect(err.retryable).toBe(false)
  })

  it('rejects an invalid sequence far beyond the NUL sample', () => {
    const bytes = concatBytes(asciiBytes(100_000), [0xc0, 0xaf], asciiBytes(10))
    expectFsError(() => decodeText(bytes, 'f'), 'FS_NOT_TEXT')
  })

  it('reports the verb it was given', () => {
    const err = expectFsError(() => decodeText(Uint8Array.of(0), 'x.txt', 'edit'), 'FS_NOT_TEXT')
    expect(err.message).toBe('cannot edit "x.txt": binary file')
    const bad = expectFsError(() => decodeText(Uint8Array.of(0x80), 'x.txt', 'write'), 'FS_NOT_TEXT')
    expect(bad.message).toBe('cannot write "x.txt": invalid UTF-8 text')
  })
})

describe('decodeTextOrNull', () => {
  it.each(INVALID)('returns null for %s', (_name, bytes) => {
    expect(decodeTextOrNull(Uint8Array.from(bytes))).toBeNull()
  })

  it('returns null for a NUL in the sample, text for a NUL after it', () => {
    expect(decodeTextOrNull(Uint8Array.of(0))).toBeNull()
    const at8191 = asciiBytes(8192)
    at8191[8191] = 0
    expect(decodeTextOrNull(at8191)).toBeNull()
    const at8192 = asciiBytes(8193)
    at8192[8192] = 0
    expect(decodeTextOrNull(at8192)).toBe('a'.repeat(8192) + '\0')
  })

  it('decodes like decodeText (BOM dropped)', () => {
    expect(decodeTextOrNull(concatBytes(UTF8_BOM, utf8('中🐂')))).toBe('中🐂')
    expect(decodeTextOrNull(new Uint8Array(0))).toBe('')
  })

  it('is null exactly when the bytes are invalid UTF-8 or have a NUL in the sample (Node isUtf8 oracle)', () => {
    // Mostly-valid bytes: encoded strings with a few random byte edits.
    const nearlyText = fc
      .tuple(fc.oneof(wellFormed, graphemes), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }))
      .map(([s, edits]) => {
        const b = utf8(s)
        for (const [i, v] of edits) if (b.length > 0) b[i % b.length] = v
        return b
      })
    fc.assert(
      fc.property(fc.oneof(nearlyText, fc.uint8Array({ maxLength: 16 })), (bytes) => {
        const valid = isUtf8(bytes) && !bytes.includes(0)
        const got = decodeTextOrNull(bytes)
        if (valid) {
          expect(got).not.toBeNull()
          expect(utf8(got ?? '')).toEqual(hasUtf8Bom(bytes) ? bytes.subarray(3) : bytes)
        } else {
          expect(got).toBeNull()
        }
        // decodeText agrees with decodeTextOrNull.
        if (got === null) expectFsError(() => decodeText(bytes, 'f'), 'FS_NOT_TEXT')
        else expect(decodeText(bytes, 'f')).toBe(got)
      }),
      { numRuns: 500 },
    )
  })
})

describe('encodeText', () => {
  it('encodes UTF-8, with a BOM in front only when asked', () => {
    expect(Array.from(encodeText('é'))).toEqual([0xc3, 0xa9])
    expect(Array.from(encodeText('é', true))).toEqual([0xef, 0xbb, 0xbf, 0xc3, 0xa9])
    expect(Array.from(encodeText('', true))).toEqual([0xef, 0xbb, 0xbf])
    expect(encodeText('').length).toBe(0)
  })

  it('round-trips through decodeText behind a BOM', () => {
    fc.assert(
      fc.property(wellFormed.filter(noNul), (s) => {
        expect(Array.from(encodeText(s))).toEqual(Array.from(utf8(s)))
        expect(decodeText(encodeText(s, true), 'f')).toBe(s)
      }),
      { numRuns: 300 },
    )
  })
})

describe('encodeWriteContent', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a Buffer', Buffer.from('abc')],
    ['a Uint8Array', Uint8Array.of(0x61)],
    ['a String object', new String('abc')],
    ['an object with toString', { toString: () => 'abc' }],
    ['an array', ['a']],
  ])('rejects %s with FS_NOT_TEXT', (_name, content) => {
    const err = expectFsError(() => encodeWriteContent(content, 'w.txt'), 'FS_NOT_TEXT')
    expect(err.message).toContain('"w.txt"')
  })

  it.each([
    ['a lone high surrogate', '\uD800'],
    ['a lone low surrogate', 'a\uDC00b'],
    ['a reversed pair', '\uDC00\uD800'],
    ['a high surrogate at the end', 'abc\uD83D'],
  ])('rejects %s with FS_NOT_TEXT (no silent U+FFFD)', (_name, content) => {
    const err = expectFsError(() => encodeWriteContent(content, 'w.txt'), 'FS_NOT_TEXT')
    expect(err).toBeInstanceOf(FsError)
    expect(err.message).toContain('surrogate')
  })

  it('returns the UTF-8 bytes of any well-formed string, U+FEFF and NUL included', () => {
    fc.assert(
      fc.property(fc.oneof(wellFormed, graphemes), (s) => {
        expect(Array.from(encodeWriteContent(s, 'w'))).toEqual(Array.from(Buffer.from(s, 'utf8')))
      }),
      { numRuns: 300 },
    )
    expect(Array.from(encodeWriteContent('\uFEFFa', 'w'))).toEqual([0xef, 0xbb, 0xbf, 0x61])
    expect(encodeWriteContent('', 'w').length).toBe(0)
  })

  it('refuses content above maxBytes UTF-8 bytes with FS_TOO_LARGE, exactly at the boundary', () => {
    fc.assert(
      fc.property(fc.oneof(wellFormed, graphemes), fc.nat({ max: 64 }), (s, limit) => {
        const size = Buffer.byteLength(s, 'utf8')
        if (size <= limit) {
          expect(encodeWriteContent(s, 'w', limit).length).toBe(size)
          return
        }
        const err = expectFsError(() => encodeWriteContent(s, 'w', limit), 'FS_TOO_LARGE')
        expect(err.details).toEqual({ size, limit })
      }),
      { numRuns: 300 },
    )
  })

  it('refuses a huge string before encoding it: no buffer of its size is ever made', () => {
    const huge = 'é'.repeat(8 * 1024 * 1024)
    const from = vi.spyOn(Buffer, 'from')
    try {
      const err = expectFsError(() => encodeWriteContent(huge, 'w', 1024 * 1024), 'FS_TOO_LARGE')
      expect(err.details).toEqual({ size: 16 * 1024 * 1024, limit: 1024 * 1024 })
      expect(from).not.toHaveBeenCalled()
    } finally {
      from.mockRestore()
    }
  })
})

// A write's `after` and an edit's texts are LF-normalized: a CRLF text well under maxTextBytes
// can hold more line endings than a one-call replaceAll builds within the heap (V8 dies then).
describe('normalizeLf of a text with tens of millions of CRLFs', () => {
  it('normalizes every one, without exhausting the heap', () => {
    const lines = 65_000_000
    const lf = normalizeLf('a\r\n'.repeat(lines))
    expect(lf.length).toBe(2 * lines)
    expect(lf.slice(0, 6)).toBe('a\na\na\n')
    expect(lf.includes('\r')).toBe(false)
  })

  it('keeps a CRLF whose CR and LF straddle its internal chunks, and a lone CR', () => {
    for (const at of [(1 << 20) - 7, (1 << 20) - 6, (1 << 20) - 1, 1 << 20, (1 << 20) + 1]) {
      const text = `${'x'.repeat(at)}\r\ny\rz\r\r\n`.repeat(3)
      expect(normalizeLf(text)).toBe(text.replaceAll('\r\n', '\n'))
    }
  })
})
