import { describe, expect, it } from 'vitest'
import { compareNames } from '@seamfs/core'

describe('compareNames', () => {
  it('orders astral characters after U+FFFD (code point order, not UTF-16 order)', () => {
    expect(['\u{1F402}', '\uFFFD', 'a'].sort(compareNames)).toEqual(['a', '\uFFFD', '\u{1F402}'])
  })
})
