import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { compareNames } from '@seamfs/core/backend'
import { sortByName } from '../src/order.js'

const named = (names: readonly string[]): { name: string }[] => names.map((name) => ({ name }))
const namesOf = (items: readonly { name: string }[]): string[] => items.map((item) => item.name)

/** Names from the units where UTF-16 order and code point order part ways, plus plain ones. */
const edgy = fc
  .array(fc.constantFrom('a', 'b', '\u007F', '\u00E9', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '\u{10000}', '\u{1F402}', '\u{10FFFF}'), {
    minLength: 1,
    maxLength: 4,
  })
  .map((parts) => parts.join(''))
const fullUnicode = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).filter((s) => s.isWellFormed())
const bmpOnly = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).filter((s) => !/[\ud800-\udfff]/.test(s))

describe('sortByName', () => {
  it('sorts names with surrogates by code point: astral characters after U+E000–U+FFFF', () => {
    const sorted = namesOf(sortByName(named(['\u{1F402}', '\uFFFF', 'a', '\u{10000}', '\uE000', '\uD7FF'])))
    expect(sorted).toEqual(['a', '\uD7FF', '\uE000', '\uFFFF', '\u{10000}', '\u{1F402}'])
    // The engine's own order would put the astral names first: the fallback is what fixes it.
    expect(['\uFFFF', '\u{10000}'].sort()).toEqual(['\u{10000}', '\uFFFF'])
  })

  it('one astral name among many plain ones still sends the whole listing to code point order', () => {
    const names = [...Array.from({ length: 50 }, (_, i) => `\uE000${i}`), '\u{1F402}', 'z']
    expect(namesOf(sortByName(named(names)))).toEqual([...names].sort(compareNames))
  })

  it('agrees with compareNames on any well-formed names, with and without surrogates', () => {
    for (const arb of [edgy, fullUnicode, bmpOnly]) {
      fc.assert(
        fc.property(fc.uniqueArray(arb, { maxLength: 40 }), (names) => {
          expect(namesOf(sortByName(named(names)))).toEqual([...names].sort(compareNames))
        }),
        { numRuns: 500 },
      )
    }
  })

  it('sorts in place, keeps the items, and orders equal names next to each other', () => {
    const items = named(['b', 'a', 'b', 'c'])
    const sorted = sortByName(items)
    expect(sorted).toBe(items)
    expect(namesOf(sorted)).toEqual(['a', 'b', 'b', 'c'])
  })
})
