import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { compareNames } from '@seamfs/core/backend'

/** Naive oracle: compare the UTF-8 bytes one by one; a proper prefix sorts first. */
function byteCompare(a: string, b: string): number {
  const x = Array.from(Buffer.from(a, 'utf8'))
  const y = Array.from(Buffer.from(b, 'utf8'))
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  }
  return x.length - y.length
}

/** Second oracle: compare code points. */
function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number)
  const y = Array.from(b, (c) => c.codePointAt(0) as number)
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  }
  return x.length - y.length
}

const sign = (n: number): number => Math.sign(n)

/** Full-Unicode well-formed names. */
const fullUnicode = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s.isWellFormed())
/** Names built from the code points where UTF-16 order and code point order part ways. */
const edgy = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      '\u007F',
      '\u0080',
      '\u07FF',
      '\u0800',
      '\uD7FF',
      '\uE000',
      '\uFB01',
      '\uFFFD',
      '\uFFFF',
      '\u{10000}',
      '\u{1F402}',
      '\u{1F403}',
      '\u{10FFFF}',
    ),
    { maxLength: 5 },
  )
  .map((cs) => cs.join(''))
const name = fc.oneof(fullUnicode, edgy)

describe('compareNames', () => {
  it('orders astral characters after U+FFFD and U+E000 (code point order, not UTF-16 order)', () => {
    expect(compareNames('\u{1F402}', '\uFFFD')).toBeGreaterThan(0)
    expect(compareNames('\uFFFD', '\u{1F402}')).toBeLessThan(0)
    expect(compareNames('\u{10000}', '\uFFFF')).toBeGreaterThan(0)
    expect(compareNames('\u{10000}', '\uE000')).toBeGreaterThan(0)
    expect(['\u{1F402}', '\uFFFD', 'a', '\uE000'].sort(compareNames)).toEqual(['a', '\uE000', '\uFFFD', '\u{1F402}'])
    // JavaScript's default sort gets this wrong, which is the point.
    expect(['\u{1F402}', '\uFFFD'].sort()).toEqual(['\u{1F402}', '\uFFFD'])
  })

  it('keeps BMP order below the surrogates', () => {
    expect(compareNames('\uD7FF', '\uE000')).toBeLessThan(0)
    expect(compareNames('\uD7FF', '\u{10000}')).toBeLessThan(0)
    expect(compareNames('Z', 'a')).toBeLessThan(0) // byte order, not locale order
    expect(compareNames('a', 'B')).toBeGreaterThan(0)
    expect(compareNames('é', 'z')).toBeGreaterThan(0)
  })

  it('orders astral characters among themselves', () => {
    expect(compareNames('\u{1F402}', '\u{1F403}')).toBeLessThan(0)
    expect(compareNames('\u{10FFFF}', '\u{10000}')).toBeGreaterThan(0)
    expect(compareNames('\u{20000}', '\u{1F402}')).toBeGreaterThan(0)
  })

  it('puts a proper prefix first', () => {
    expect(compareNames('a', 'ab')).toBeLessThan(0)
    expect(compareNames('ab', 'a')).toBeGreaterThan(0)
    expect(compareNames('', 'a')).toBeLessThan(0)
    expect(compareNames('\u{1F402}', '\u{1F402}a')).toBeLessThan(0)
    expect(compareNames('file', 'file.txt')).toBeLessThan(0)
  })

  it('returns 0 only for equal names', () => {
    expect(compareNames('', '')).toBe(0)
    expect(compareNames('a\u{1F402}', 'a\u{1F402}')).toBe(0)
    // Canonically equivalent but different code points are not equal.
    expect(compareNames('é', 'e\u0301')).not.toBe(0)
  })

  it('agrees with UTF-8 byte order for any two full-Unicode names', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(sign(compareNames(a, b))).toBe(sign(byteCompare(a, b)))
        expect(sign(compareNames(a, b))).toBe(sign(codePointCompare(a, b)))
      }),
      { numRuns: 1000 },
    )
  })

  it('agrees with byte order on names sharing a prefix', () => {
    fc.assert(
      fc.property(name, name, name, (prefix, a, b) => {
        expect(sign(compareNames(prefix + a, prefix + b))).toBe(sign(byteCompare(prefix + a, prefix + b)))
      }),
      { numRuns: 500 },
    )
  })

  it('is antisymmetric and 0 exactly on equal names', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(sign(compareNames(a, b)) + sign(compareNames(b, a))).toBe(0)
        expect(compareNames(a, b) === 0).toBe(a === b)
        expect(compareNames(a, a)).toBe(0)
      }),
      { numRuns: 500 },
    )
  })

  it('sorts a list like sorting the UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.array(name, { maxLength: 20 }), (names) => {
        const sorted = [...names].sort(compareNames)
        const byBytes = [...names].sort(byteCompare)
        expect(sorted).toEqual(byBytes)
        for (let i = 1; i < sorted.length; i++) {
          expect(compareNames(sorted[i - 1] as string, sorted[i] as string)).toBeLessThanOrEqual(0)
        }
      }),
      { numRuns: 300 },
    )
  })
})
