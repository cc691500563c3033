/**
 * A file the backend creates on its fast path (its own link and node, built field by field)
 * must be indistinguishable from one memfs creates: the same fields, path, events,
 * watcher notifications, directory count and times, and every memfs call on it must work.
 */
import { describe, expect, it } from 'vitest'
import type { Link } from '@jsonjoy.com/fs-core'
import type { MemoryFileSystem } from '@seamfs/backend-memory'
import { closeAfterEach, memory } from './support.js'

closeAfterEach()

/** `d/ours.txt` made through the filesystem, `d/theirs.txt` by memfs; both links. */
async function pair(fs: MemoryFileSystem): Promise<{ ours: Link; theirs: Link; dir: Link }> {
  await fs.writeText(await fs.resolve('/d/ours.txt'), 'ours')
  fs.volume.writeFileSync('/d/theirs.txt', 'theirs')
  const core = fs.volume._core
  return { ours: core.getLink(['d', 'ours.txt']) as Link, theirs: core.getLink(['d', 'theirs.txt']) as Link, dir: core.getLink(['d']) as Link }
}

describe('a file created on the fast path is a file memfs could have made', () => {
  it('same fields, path, events, watcher notifications and directory bookkeeping as memfs’s own create', async () => {
    let now = Date.parse('2026-01-02T03:04:05Z')
    const fs = memory({ 'd/': null }, { clock: () => now })
    const core = fs.volume._core
    const dir = core.getResolvedLink('/d')
    if (dir === null) throw new Error('no /d')
    const added: string[] = []
    dir.changes.listen((event) => added.push(`${event[0]}:${(event[1] as { getName(): string }).getName()}`))
    const watched: string[] = []
    const watcher = fs.volume.watch('/d', (event, name) => watched.push(`${event}:${String(name)}`))
    try {
      now += 1000
      await fs.writeText(await fs.resolve('/d/ours.txt'), 'ours')
      fs.volume.writeFileSync('/d/theirs.txt', 'theirs')
      await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      watcher.close()
    }
    const ours = core.getResolvedLink('/d/ours.txt')
    const theirs = core.getResolvedLink('/d/theirs.txt')
    if (ours === null || theirs === null) throw new Error('a file is missing')
    expect(Object.keys(ours)).toEqual(Object.keys(theirs))
    expect(Object.getPrototypeOf(ours)).toBe(Object.getPrototypeOf(theirs))
    expect(Object.keys(ours.getNode())).toEqual(Object.keys(theirs.getNode()))
    expect(ours.ino).toBe(ours.getNode().ino)
    expect(ours.getNode().nlink).toBe(theirs.getNode().nlink)
    expect(core.inodes[ours.ino]).toBe(ours.getNode())
    expect(ours.getPath()).toBe('/d/ours.txt')
    expect(ours.steps).toEqual(['', 'd', 'ours.txt'])
    expect(ours.parent).toBe(dir)
    expect(dir.length).toBe(2)
    expect(added).toEqual(['child:add:ours.txt', 'child:add:theirs.txt'])
    expect(watched).toEqual(['rename:ours.txt', 'change:ours.txt', 'rename:theirs.txt', 'change:theirs.txt'])
    // The directory's times come from the filesystem's clock, as the file's do.
    expect(fs.volume.statSync('/d/ours.txt').mtimeMs).toBe(now)
    expect(Number(fs.volume.statSync('/d').mtimeMs)).toBeGreaterThanOrEqual(now)
  })

  it('memfs’s own calls work on it: stat, read, append, rename, link, unlink, and the inode is released', async () => {
    const fs = memory()
    await fs.writeText(await fs.resolve('/a/f.txt'), 'one')
    const v = fs.volume
    expect(v.statSync('/a/f.txt').size).toBe(3)
    v.appendFileSync('/a/f.txt', ' two')
    expect(v.readFileSync('/a/f.txt', 'utf8')).toBe('one two')
    v.renameSync('/a/f.txt', '/a/g.txt')
    expect(await fs.readText(await fs.resolve('/a/g.txt'))).toBe('one two')
    v.linkSync('/a/g.txt', '/a/h.txt')
    expect(v.statSync('/a/h.txt').nlink).toBe(2)
    v.unlinkSync('/a/g.txt')
    v.unlinkSync('/a/h.txt')
    expect(v.readdirSync('/a')).toEqual([])
    expect(fs.toJSON()).toEqual({ 'a/': null })
    await fs.writeText(await fs.resolve('/a/again.txt'), 'again')
    expect(fs.toJSON()).toEqual({ 'a/again.txt': 'again' })
  })

  it('follows a rename of the directory holding it (steps, getPath, reads through the new path)', async () => {
    const fs = memory({ 'd/': null })
    const { ours } = await pair(fs)
    fs.volume.mkdirSync('/top')
    fs.volume.renameSync('/d', '/top/e')
    expect(ours.getPath()).toBe('/top/e/ours.txt')
    expect(fs.volume.realpathSync('/top/e/ours.txt')).toBe('/top/e/ours.txt')
    expect(await fs.readText(await fs.resolve('/top/e/ours.txt'))).toBe('ours')
    await fs.writeText(await fs.resolve('/top/e/ours.txt'), 'again')
    expect(String(fs.volume.readFileSync('/top/e/ours.txt', 'utf8'))).toBe('again')
  })

  it('hard-links, unlinks and counts like memfs’s own: a non-recursive rmdir relies on the count', async () => {
    const fs = memory({ 'd/': null })
    const { ours, dir } = await pair(fs)
    fs.volume.linkSync('/d/ours.txt', '/d/hard.txt')
    expect(ours.getNode().nlink).toBe(2)
    await fs.writeText(await fs.resolve('/d/ours.txt'), 'shared')
    expect(String(fs.volume.readFileSync('/d/hard.txt', 'utf8'))).toBe('shared')
    fs.volume.unlinkSync('/d/ours.txt')
    expect(String(fs.volume.readFileSync('/d/hard.txt', 'utf8'))).toBe('shared')
    fs.volume.unlinkSync('/d/hard.txt')
    fs.volume.unlinkSync('/d/theirs.txt')
    expect(dir.length).toBe(0)
    fs.volume.rmdirSync('/d')
    expect(fs.volume.existsSync('/d')).toBe(false)
  })
})
