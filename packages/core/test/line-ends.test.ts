/**
 * Line ends counted at memory speed: the WebAssembly counter must count exactly what one native
 * search per line end counts, over every range, across its 64 KiB chunks and 16-byte blocks.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countByIndexOf, countLineEnds, LineEndTally } from '../src/line-ends.js'

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

describe('LineEndTally', () => {
  /** 3 MiB of lines of random lengths: large enough to be counted in the background, in slices. */
  const bytes = (() => {
    const out = Buffer.alloc(3 * 1024 * 1024, 0x61)
    let seed = 7
    for (let i = 0; i < out.length; i += 1 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 97)) out[i] = 10
    return out
  })()
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

  it('answers what a fresh count answers, at any offset, before, during and after its background count (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(bytes.length),
        fc.array(fc.oneof(fc.constant('turn' as const), fc.integer({ min: -10, max: bytes.length + 10 })), { maxLength: 12 }),
        async (end, steps) => {
          const tally = new LineEndTally(bytes, end)
          for (const step of steps) {
            if (step === 'turn') await turn()
            else expect(tally.upTo(step)).toBe(countByIndexOf(bytes, 0, Math.max(0, Math.min(step, bytes.length))))
          }
          for (let i = 0; i < 3; i++) await turn()
          expect(tally.upTo(end)).toBe(countByIndexOf(bytes, 0, end))
        },
      ),
      { seed: 20261203, numRuns: 60 },
    )
  })

  it('counts in the background: after enough turns of the event loop, the count is done without being asked', async () => {
    const tally = new LineEndTally(bytes, bytes.length)
    expect(tally.counted).toBe(0)
    await turn()
    // A slice a turn: under way, not done.
    expect(tally.counted).toBeGreaterThan(0)
    expect(tally.counted).toBeLessThan(bytes.length)
    for (let i = 0; i < 4; i++) await turn()
    expect(tally.counted).toBe(bytes.length)
    expect(tally.upTo(bytes.length)).toBe(countByIndexOf(bytes, 0, bytes.length))
    // A small prefix is counted when asked, never in the background.
    const small = new LineEndTally(bytes, 1000)
    await turn()
    expect(small.counted).toBe(0)
    expect(small.upTo(1000)).toBe(countByIndexOf(bytes, 0, 1000))
  })
})
