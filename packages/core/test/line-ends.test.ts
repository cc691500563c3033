/**
 * Line ends counted at memory speed: the WebAssembly counter must count exactly what one native
 * search per line end counts, over every range, across its 64 KiB chunks and 16-byte blocks.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countByIndexOf, countLineEnds } from '../src/line-ends.js'

describe('countLineEnds', () => {
  it('counts what a search per line end counts, on any bytes and any range (fixed seed)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 70_000 }).chain((bytes) => fc.tuple(fc.constant(bytes), fc.nat(bytes.length), fc.nat(bytes.length))),
        ([bytes, x, y]) => {
          const [from, to] = x <= y ? [x, y] : [y, x]
          expect(countLineEnds(bytes, from, to)).toBe(countByIndexOf(bytes, from, to))
        },
      ),
      { seed: 20261202, numRuns: 200 },
    )
  })

  it('counts every line end of a text that spans many chunks, and none outside the range', () => {
    const text = Buffer.from('a\n'.repeat(300_000) + 'tail')
    expect(countLineEnds(text)).toBe(300_000)
    expect(countLineEnds(text, 1, text.length - 4)).toBe(300_000)
    expect(countLineEnds(text, 2, 2 + 65_536 * 2)).toBe(65_536)
    // 255 blocks of 16 line ends each, then more: the per-lane sums must not overflow.
    expect(countLineEnds(Buffer.alloc(16 * 255 * 3 + 5, 10))).toBe(16 * 255 * 3 + 5)
  })
})
