/**
 * A file the backend creates on its fast path (its own link and node, built field by field,
 * issue 21) must be indistinguishable from one memfs creates: the same fields, path, events,
 * watcher notifications, directory count and times, and every memfs call on it must work.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const opened: MemoryFileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

describe('a file created on the fast path is a file memfs could have made', () => {
  it('same fields, path, events, watcher notifications and directory bookkeeping as memfs’s own create', async () => {
    let now = Date.parse('2026-01-02T03:04:05Z')
    const fs = new MemoryFileSystem({ files: { 'd/': null }, clock: () => now })
    opened.push(fs)
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
    expect(Object.keys(ours.getNode())).toEqual(Object.keys(theirs.getNode()))
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
    const fs = new MemoryFileSystem()
    opened.push(fs)
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
})
