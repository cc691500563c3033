import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { TextChunkDecoder, UTF8_BOM, decodeTextStream } from '../src/text.js'
import { asciiBytes, concatBytes, expectFsError, expectFsErrorAsync, utf8 } from './helpers.js'

/** 1-, 2-, 3- and 4-byte characters, in the middle and at both ends. */
const SAMPLE = '🐂aé中🐂 x é\n中z🐂é'

function decodeChunks(chunks: readonly Uint8Array[], path = 'f'): string {
  const decoder = new TextChunkDecoder(path)
  let out = ''
  for (const chunk of chunks) out += decoder.push(chunk)
  return out + decoder.end()
}

function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const sorted = [...new Set(cuts)].sort((a, b) => a - b)
  const out: Uint8Array[] = []
  let from = 0
  for (const cut of sorted) {
    out.push(bytes.slice(from, cut))
    from = cut
  }
  out.push(bytes.slice(from))
  return out
}

async function* source(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk
}

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const part of iterable) out.push(part)
  return out
}

describe('TextChunkDecoder', () => {
  it('decodes a text split into two chunks at every byte boundary', () => {
    const bytes = utf8(SAMPLE)
    expect(bytes.length).toBeGreaterThan(SAMPLE.length) // really multi-byte
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(decodeChunks([bytes.slice(0, cut), bytes.slice(cut)]), `cut at ${cut}`).toBe(SAMPLE)
    }
  })

  it('decodes a text fed one byte at a time', () => {
    const bytes = utf8(SAMPLE)
    const chunks = Array.from(bytes, (b) => Uint8Array.of(b))
    expect(decodeChunks(chunks)).toBe(SAMPLE)
  })

  it('emits a split character only once it is complete', () => {
    const decoder = new TextChunkDecoder('f')
    const ox = utf8('🐂') // 4 bytes
    expect(decoder.push(ox.slice(0, 1))).toBe('')
    expect(decoder.push(ox.slice(1, 3))).toBe('')
    expect(decoder.push(concatBytes(ox.slice(3), utf8('a')))).toBe('🐂a')
    expect(decoder.end()).toBe('')
  })

  it('decodes any well-formed text under any chunking', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => s.isWellFormed() && !s.includes('\0'))
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (s, rawCuts) => {
        const bytes = utf8(s)
        const cuts = rawCuts.map((c) => c % (bytes.length + 1))
        const expected = s.startsWith('\uFEFF') ? s.slice(1) : s
        expect(decodeChunks(splitAt(bytes, cuts))).toBe(expected)
      }),
      { numRuns: 500 },
    )
  })

  it('accepts empty chunks anywhere', () => {
    const bytes = utf8('中')
    const empty = new Uint8Array(0)
    expect(decodeChunks([empty, bytes.slice(0, 1), empty, bytes.slice(1), empty])).toBe('中')
    expect(decodeChunks([])).toBe('')
  })

  it.each([
    ['0xE4 0xB8', [0xe4, 0xb8]],
    ['0xF0 0x9F 0x90', [0xf0, 0x9f, 0x90]],
    ['0xC3', [0xc3]],
  ])('throws FS_NOT_TEXT at end() for a truncated trailing sequence %s', (_name, tail) => {
    const decoder = new TextChunkDecoder('t.txt')
    expect(decoder.push(utf8('ok'))).toBe('ok')
    expect(decoder.push(Uint8Array.from(tail))).toBe('')
    const err = expectFsError(() => decoder.end(), 'FS_NOT_TEXT')
    expect(err.message).toBe('cannot read "t.txt": invalid UTF-8 text')
  })

  it.each([
    ['lone continuation 0x80', [0x80]],
    ['overlong 0xC0 0xAF', [0xc0, 0xaf]],
    ['surrogate 0xED 0xA0 0x80', [0xed, 0xa0, 0x80]],
    ['above U+10FFFF 0xF4 0x90 0x80 0x80', [0xf4, 0x90, 0x80, 0x80]],
  ])('throws FS_NOT_TEXT for %s, even fed byte by byte', (_name, bad) => {
    const whole = new TextChunkDecoder('f')
    expect(whole.push(utf8('abc'))).toBe('abc')
    expectFsError(() => whole.push(Uint8Array.from(bad)) + whole.end(), 'FS_NOT_TEXT')
    const bytes = concatBytes(utf8('abc'), bad, utf8('xyz'))
    expectFsError(() => decodeChunks(Array.from(bytes, (b) => Uint8Array.of(b))), 'FS_NOT_TEXT')
  })

  it('rejects a 2-byte character interrupted by ASCII across chunks: at the end, or once the NUL sample is complete', () => {
    const ended = new TextChunkDecoder('f')
    expect(ended.push(Uint8Array.of(0x61, 0xc3))).toBe('a')
    // Within the NUL sample (8192 bytes) nothing more is handed on, and the failure waits for the sample.
    expect(ended.push(Uint8Array.of(0x41))).toBe('')
    expect(expectFsError(() => ended.end(), 'FS_NOT_TEXT').message).toMatch(/invalid UTF-8/)
    const sampled = new TextChunkDecoder('f')
    sampled.push(Uint8Array.of(0x61, 0xc3))
    sampled.push(Uint8Array.of(0x41))
    expect(sampled.push(new Uint8Array(4000).fill(0x62))).toBe('')
    expect(expectFsError(() => sampled.push(new Uint8Array(8000).fill(0x62)), 'FS_NOT_TEXT').message).toMatch(/invalid UTF-8/)
  })

  // readText decides on the whole file: a NUL in the first 8192 bytes is "binary", whatever invalid
  // UTF-8 comes before it; a stream must say the same whatever its chunk sizes.
  it.each([1, 3, 7, 100, 5000, 9000])('a NUL in the sample after invalid UTF-8 is told as readText tells it, in chunks of %i', (size) => {
    const bytes = concatBytes(utf8('ab'), Uint8Array.of(0xff), utf8('c'.repeat(6000)), Uint8Array.of(0), utf8('d'.repeat(3000)))
    const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size))
    const decoder = new TextChunkDecoder('f')
    const err = expectFsError(() => {
      for (const chunk of chunks) decoder.push(chunk)
      decoder.end()
    }, 'FS_NOT_TEXT')
    expect(err.message).toMatch(/binary file/)
    // Past the sample, the NUL is no reason: the invalid byte is.
    const late = concatBytes(utf8('ab'), Uint8Array.of(0xff), utf8('c'.repeat(9000)), Uint8Array.of(0))
    const lateDecoder = new TextChunkDecoder('f')
    const lateErr = expectFsError(() => {
      for (let at = 0; at < late.length; at += size) lateDecoder.push(late.subarray(at, at + size))
      lateDecoder.end()
    }, 'FS_NOT_TEXT')
    expect(lateErr.message).toMatch(/invalid UTF-8/)
  })

  describe('NUL sample across chunks', () => {
    const cases: readonly (readonly [string, readonly number[], number])[] = [
      ['one chunk', [9000], 8191],
      ['5000 + rest', [5000, 4000], 8191],
      ['8191 + rest (NUL first in chunk 2)', [8191, 100], 8191],
      ['8000 + 300 (NUL inside chunk 2)', [8000, 300], 8191],
      ['1-byte chunks around the limit', [8190, 1, 1, 1, 1], 8191],
      ['NUL at byte 0', [10, 10], 0],
    ]
    it.each(cases)('rejects a NUL in the sample: %s, chunk sizes %j, NUL at byte %i', (_name, sizes, nulAt) => {
      const total = sizes.reduce((a, b) => a + b, 0)
      const bytes = asciiBytes(total)
      bytes[nulAt] = 0
      const cuts: number[] = []
      let at = 0
      for (const size of sizes.slice(0, -1)) cuts.push((at += size))
      const err = expectFsError(() => decodeChunks(splitAt(bytes, cuts), 'bin'), 'FS_NOT_TEXT')
      expect(err.message).toBe('cannot read "bin": binary file')
    })

    it.each([
      ['one chunk', [9000]],
      ['8192 + rest (NUL first in chunk 2)', [8192, 100]],
      ['8000 + 300 (NUL inside chunk 2)', [8000, 300]],
      ['8191 + 1 + rest', [8191, 1, 5]],
      ['1-byte chunks', [8190, 1, 1, 1, 1]],
    ])('accepts a NUL at cumulative byte 8192: %s', (_name, sizes) => {
      const total = sizes.reduce((a, b) => a + b, 0)
      const bytes = asciiBytes(total)
      bytes[8192] = 0
      const cuts: number[] = []
      let at = 0
      for (const size of sizes.slice(0, -1)) cuts.push((at += size))
      const text = decodeChunks(splitAt(bytes, cuts))
      expect(text.length).toBe(total)
      expect(text.indexOf('\0')).toBe(8192)
    })
  })

  describe('BOM', () => {
    it('drops a BOM split across the first chunks, however it is split', () => {
      const bytes = concatBytes(UTF8_BOM, utf8('é中'))
      for (let a = 0; a <= 3; a++) {
        for (let b = a; b <= 4; b++) {
          expect(decodeChunks(splitAt(bytes, [a, b])), `cuts ${a},${b}`).toBe('é中')
        }
      }
      expect(decodeChunks(Array.from(bytes, (x) => Uint8Array.of(x)))).toBe('é中')
    })

    it('drops only the leading BOM: a U+FEFF later (even at a chunk start) is text', () => {
      expect(decodeChunks([UTF8_BOM, UTF8_BOM, utf8('a')])).toBe('\uFEFFa')
      expect(decodeChunks([utf8('a'), UTF8_BOM, utf8('b')])).toBe('a\uFEFFb')
      expect(decodeChunks([utf8('a'), UTF8_BOM.slice(0, 2), UTF8_BOM.slice(2)])).toBe('a\uFEFF')
    })

    it('counts BOM bytes in the NUL sample', () => {
      const bytes = concatBytes(UTF8_BOM, asciiBytes(8188), [0]) // NUL at byte 8191
      expectFsError(() => decodeChunks(splitAt(bytes, [2, 4000])), 'FS_NOT_TEXT')
    })
  })
})

describe('decodeTextStream', () => {
  it('yields the text, never an empty chunk', async () => {
    const bytes = utf8(SAMPLE)
    const parts = await collect(decodeTextStream(source(Array.from(bytes, (b) => Uint8Array.of(b))), 'f'))
    expect(parts.join('')).toBe(SAMPLE)
    expect(parts.every((p) => p !== '')).toBe(true)
    // Only complete characters are yielded: no lone surrogate in any part.
    expect(parts.every((p) => p.isWellFormed())).toBe(true)
  })

  it('decodes every two-chunk split', async () => {
    const bytes = utf8(SAMPLE)
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parts = await collect(decodeTextStream(source([bytes.slice(0, cut), bytes.slice(cut)]), 'f'))
      expect(parts.join('')).toBe(SAMPLE)
    }
  })

  it('drops a split BOM and yields nothing for an empty or BOM-only stream', async () => {
    expect(await collect(decodeTextStream(source([UTF8_BOM.slice(0, 1), UTF8_BOM.slice(1), utf8('x')]), 'f'))).toEqual(['x'])
    expect(await collect(decodeTextStream(source([UTF8_BOM]), 'f'))).toEqual([])
    expect(await collect(decodeTextStream(source([]), 'f'))).toEqual([])
  })

  it('rejects a truncated trailing sequence with FS_NOT_TEXT after the complete text', async () => {
    const seen: string[] = []
    const run = async (): Promise<void> => {
      for await (const part of decodeTextStream(source([utf8('abc'), Uint8Array.of(0xe4, 0xb8)]), 's.txt')) {
        seen.push(part)
      }
    }
    const err = await expectFsErrorAsync(run(), 'FS_NOT_TEXT')
    expect(err.message).toContain('"s.txt"')
    expect(seen.join('')).toBe('abc')
  })

  it('rejects a NUL in the sample across chunks', async () => {
    const bytes = asciiBytes(8200)
    bytes[8191] = 0
    await expectFsErrorAsync(collect(decodeTextStream(source(splitAt(bytes, [4000, 8191])), 'f')), 'FS_NOT_TEXT')
  })

  it('checks an aborted signal between chunks (FS_ABORTED, reason as cause) and closes the source', async () => {
    const controller = new AbortController()
    const reason = new Error('stop')
    let closed = false
    let pulled = 0
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        // Finite, so a missing abort check fails the test instead of spinning forever.
        for (let i = 0; i < 10; i++) {
          pulled++
          yield utf8('chunk')
        }
      } finally {
        closed = true
      }
    }
    const seen: string[] = []
    const run = async (): Promise<void> => {
      for await (const part of decodeTextStream(chunks(), 'f', controller.signal)) {
        seen.push(part)
        if (seen.length === 2) controller.abort(reason)
      }
    }
    const err = await expectFsErrorAsync(run(), 'FS_ABORTED')
    expect(err.cause).toBe(reason)
    expect(seen).toEqual(['chunk', 'chunk'])
    expect(pulled).toBe(3)
    expect(closed).toBe(true)
  })

  it('fails on the first chunk when the signal is already aborted', async () => {
    const signal = AbortSignal.abort()
    const err = await expectFsErrorAsync(collect(decodeTextStream(source([utf8('a')]), 'f', signal)), 'FS_ABORTED')
    expect(err.cause).toBe(signal.reason)
  })

  it('is unaffected by a signal that is never aborted', async () => {
    const controller = new AbortController()
    const parts = await collect(decodeTextStream(source([utf8('a'), utf8('b')]), 'f', controller.signal))
    expect(parts.join('')).toBe('ab')
  })
})

describe('TextChunkDecoder with a reused read buffer', () => {
  it('decodes correctly when the caller overwrites its buffer between chunks (a carried partial character is copied)', () => {
    const text = '🐂中é'.repeat(20_000)
    const bytes = Buffer.from(text)
    for (const size of [4096, 65536, 7]) {
      const buffer = Buffer.allocUnsafe(size)
      const decoder = new TextChunkDecoder('reuse.txt')
      let out = ''
      for (let at = 0; at < bytes.length; at += size) {
        const n = bytes.copy(buffer, 0, at, at + size)
        out += decoder.push(buffer.subarray(0, n))
      }
      out += decoder.end()
      expect(out === text).toBe(true)
    }
  })
})
