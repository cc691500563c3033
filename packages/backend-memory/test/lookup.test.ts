/**
 * The memory backend remembers the walks it made (`src/lookup.ts`). A remembered walk
 * must never outlive the tree it was made in: whatever is done straight on the volume between
 * two calls (removes, moves, links swapped in, modes changed, the volume reset), the next call
 * sees the tree as it is. A model test drives random volume changes and compares every read
 * and write with what memfs itself says.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { isFsError } from '@seamfs/core'
import { closeAfterEach, memory, readAt } from './support.js'

closeAfterEach()

/** What memfs itself reads at `path` (links followed), or `undefined` where it refuses. */
function volumeReads(fs: MemoryFileSystem, path: string): string | undefined {
  try {
    return String(fs.volume.readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}

describe('remembered walks follow changes made straight on the volume', () => {
  it('a directory moved away and another made in its place', async () => {
    const fs = memory({ 'd/f.txt': 'old' })
    expect(await readAt(fs, '/d/f.txt')).toBe('old')
    fs.volume.renameSync('/d', '/e')
    fs.volume.mkdirSync('/d')
    fs.volume.writeFileSync('/d/f.txt', 'new')
    expect(await readAt(fs, '/d/f.txt')).toBe('new')
    await fs.writeText(await fs.resolve('/d/f.txt'), 'written')
    expect(fs.volume.readFileSync('/d/f.txt', 'utf8')).toBe('written')
    expect(fs.volume.readFileSync('/e/f.txt', 'utf8')).toBe('old')
  })

  it('a file removed and created again; a directory swapped for a link to elsewhere', async () => {
    const fs = memory({ 'd/f.txt': 'one', 'x/f.txt': 'outside' })
    expect(await readAt(fs, '/d/f.txt')).toBe('one')
    fs.volume.unlinkSync('/d/f.txt')
    expect(await readAt(fs, '/d/f.txt')).toBe('FS_NOT_FOUND')
    fs.volume.writeFileSync('/d/f.txt', 'two')
    expect(await readAt(fs, '/d/f.txt')).toBe('two')
    fs.volume.rmSync('/d', { recursive: true })
    fs.volume.symlinkSync('/x', '/d')
    const target = await fs.resolve('/d/f.txt')
    expect(target.targetKey).toBe('/x/f.txt')
    expect(await fs.readText(target)).toBe('outside')
  })

  it('a directory made unsearchable refuses as memfs does, and searchable again works again', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    const file = await fs.resolve('/d/f.txt')
    await fs.writeText(file, 'two')
    fs.volume.chmodSync('/d', 0o000)
    let code: string | undefined
    try {
      await fs.writeText(file, 'three')
    } catch (err) {
      code = isFsError(err) ? err.code : 'other'
    }
    // memfs's own answer for the same write (it checks as the host process).
    let memfsRefuses = false
    try {
      fs.volume.writeFileSync('/d/f.txt', 'probe')
    } catch {
      memfsRefuses = true
    }
    if (memfsRefuses) expect(code).toBe('FS_PERMISSION_DENIED')
    fs.volume.chmodSync('/d', 0o755)
    await fs.writeText(file, 'four')
    expect(fs.volume.readFileSync('/d/f.txt', 'utf8')).toBe('four')
  })

  it('a volume reset: nothing remembered from the old tree is used', async () => {
    const fs = memory({ 'd/f.txt': 'before reset' })
    expect(await readAt(fs, '/d/f.txt')).toBe('before reset')
    fs.volume.reset()
    expect(await readAt(fs, '/d/f.txt')).toBe('FS_NOT_FOUND')
    fs.volume.mkdirSync('/d')
    await fs.writeText(await fs.resolve('/d/f.txt'), 'after reset')
    expect(fs.volume.readFileSync('/d/f.txt', 'utf8')).toBe('after reset')
  })

  it('after close, changes are still seen (nothing is remembered any more)', async () => {
    const fs = new MemoryFileSystem({ files: { 'd/f.txt': 'one' } })
    expect(await readAt(fs, '/d/f.txt')).toBe('one')
    await fs.close()
    fs.volume.renameSync('/d', '/e')
    fs.volume.mkdirSync('/d')
    fs.volume.writeFileSync('/d/f.txt', 'two')
    expect(await readAt(fs, '/d/f.txt')).toBe('two')
  })

  it('model: random volume changes between calls never leave a stale answer', async () => {
    const names = ['a', 'b', 'c']
    const paths = ['/a/f', '/a/g', '/b/f', '/b/a/f', '/c/f']
    const change = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), path: fc.constantFrom(...paths), text: fc.string({ maxLength: 4 }) }),
      fc.record({ kind: fc.constant('rm' as const), path: fc.constantFrom(...names.map((n) => `/${n}`), ...paths) }),
      fc.record({
        kind: fc.constant('mv' as const),
        from: fc.constantFrom(...names.map((n) => `/${n}`)),
        to: fc.constantFrom(...names.map((n) => `/${n}`), '/b/a'),
      }),
      fc.record({
        kind: fc.constant('link' as const),
        at: fc.constantFrom(...names.map((n) => `/${n}`)),
        to: fc.constantFrom(...names.map((n) => `/${n}`), '/b/a'),
      }),
      fc.record({ kind: fc.constant('chmod' as const), at: fc.constantFrom(...names.map((n) => `/${n}`)), mode: fc.constantFrom(0o755, 0o555, 0o700) }),
      fc.record({ kind: fc.constant('reset' as const) }),
    )
    const step = fc.record({ change, probe: fc.constantFrom(...paths), viaFs: fc.boolean(), text: fc.string({ maxLength: 4 }) })
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const fs = new MemoryFileSystem({ files: { 'a/f': 'af', 'a/g': 'ag', 'b/f': 'bf', 'b/a/f': 'baf', 'c/f': 'cf' } })
        try {
          for (const { change: c, probe, viaFs, text } of steps) {
            applyChange(fs, c)
            if (viaFs) {
              // A write through the filesystem lands where memfs says the path leads, or fails where memfs would.
              let wrote = false
              try {
                await fs.writeText(await fs.resolve(probe), text)
                wrote = true
              } catch (err) {
                if (!isFsError(err)) throw err
              }
              if (wrote) expect(volumeReads(fs, probe)).toBe(text)
            }
            const seen = await readAt(fs, probe)
            const truth = volumeReads(fs, probe)
            if (truth === undefined) expect(seen.startsWith('FS_')).toBe(true)
            else if (!seen.startsWith('FS_')) expect(seen).toBe(truth)
            else expect(['FS_PERMISSION_DENIED', 'FS_NOT_TEXT']).toContain(seen)
          }
        } finally {
          await fs.close()
        }
      }),
      { numRuns: 300 },
    )
  })
})

type Change =
  | { kind: 'write'; path: string; text: string }
  | { kind: 'rm'; path: string }
  | { kind: 'mv'; from: string; to: string }
  | { kind: 'link'; at: string; to: string }
  | { kind: 'chmod'; at: string; mode: number }
  | { kind: 'reset' }

/** One change made straight on the volume; one memfs refuses changes nothing, as it says. */
function applyChange(fs: MemoryFileSystem, c: Change): void {
  const v = fs.volume
  try {
    if (c.kind === 'write') v.writeFileSync(c.path, c.text)
    else if (c.kind === 'rm') v.rmSync(c.path, { recursive: true, force: true })
    else if (c.kind === 'mv') v.renameSync(c.from, c.to)
    else if (c.kind === 'link') {
      v.rmSync(c.at, { recursive: true, force: true })
      v.symlinkSync(c.to, c.at)
    } else if (c.kind === 'chmod') v.chmodSync(c.at, c.mode)
    else {
      v.reset()
      v.mkdirSync('/a')
      v.writeFileSync('/a/f', 'reset')
    }
  } catch {
    // memfs refused: nothing changed.
  }
}
