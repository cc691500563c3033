/**
 * `contains` on the disk compares canonical keys by prefix, and anything else the long way: both
 * must answer what the normalizing comparison answers, for canonical keys and for keys a caller
 * built by hand (`..`, `.`, doubled or trailing slashes), which the fence must never take for inside.
 */
import { isAbsolute, relative, sep } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { containsPath } from '../src/paths.js'

/** The normalizing comparison: what `containsPath` answered before its prefix fast path. */
function byRelative(parent: string, child: string): boolean {
  const rel = relative(parent, child)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

const segment = fc.constantFrom('a', 'b', 'ab', 'a.b', '..', '.', '', '...', 'a b')
const absolute = fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`)

describe('containsPath', () => {
  it('answers what the normalizing comparison answers, for any keys (fixed seed)', () => {
    fc.assert(
      fc.property(absolute, absolute, (parent, child) => {
        expect(containsPath(parent, child)).toBe(byRelative(parent, child))
        // The child below the parent by construction, with whatever segments it holds.
        expect(containsPath(parent, `${parent}/${child}`)).toBe(byRelative(parent, `${parent}/${child}`))
      }),
      { seed: 20261203, numRuns: 3000 },
    )
  })

  it('never takes a name prefix or a climb out for inside', () => {
    expect(containsPath('/ws', '/ws')).toBe(true)
    expect(containsPath('/ws', '/ws/a/b')).toBe(true)
    expect(containsPath('/', '/etc')).toBe(true)
    expect(containsPath('/ws', '/wsx')).toBe(false)
    expect(containsPath('/ws', '/ws/../etc/passwd')).toBe(false)
    expect(containsPath('/ws', '/ws/a/../../etc')).toBe(false)
    expect(containsPath('/ws/a', '/ws/a/./../b')).toBe(false)
  })
})
