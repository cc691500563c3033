/**
 * Review of ffe60b5 (issue 21): a file created through the filesystem gets a `Link` built field by
 * field (`createFileLink`), not by memfs's `createChild`. Everything memfs later does with links —
 * renames of the directory holding them, hard links, `toJSON`, watchers, counts, removals — must
 * treat it as one of its own; compared here with a sibling made by memfs.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import type { Link } from '@jsonjoy.com/fs-core'

const opened: MemoryFileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

function memory(): MemoryFileSystem {
  const fs = new MemoryFileSystem({ files: { 'd/': null } })
  opened.push(fs)
  return fs
}

/** `d/ours.txt` made through the filesystem, `d/theirs.txt` by memfs; both links. */
async function pair(fs: MemoryFileSystem): Promise<{ ours: Link; theirs: Link; dir: Link }> {
  await fs.writeText(await fs.resolve('/d/ours.txt'), 'ours')
  fs.volume.writeFileSync('/d/theirs.txt', 'theirs')
  const core = fs.volume._core
  return { ours: core.getLink(['d', 'ours.txt']) as Link, theirs: core.getLink(['d', 'theirs.txt']) as Link, dir: core.getLink(['d']) as Link }
}

describe('a link built by createFileLink is one of memfs own', () => {
  it('has the same own fields, in the same shape, as a link memfs makes', async () => {
    const fs = memory()
    const { ours, theirs, dir } = await pair(fs)
    expect(Object.keys(ours)).toEqual(Object.keys(theirs))
    expect(Object.getPrototypeOf(ours)).toBe(Object.getPrototypeOf(theirs))
    expect(ours.parent).toBe(dir)
    expect(ours.steps).toEqual([...dir.steps, 'ours.txt'])
    expect(ours.getPath()).toBe('/d/ours.txt')
    expect(ours.ino).toBe(ours.getNode().ino)
    expect([...ours.children.keys()]).toEqual([...theirs.children.keys()])
    expect(dir.length).toBe(2)
    expect(Object.keys(ours.getNode())).toEqual(Object.keys(theirs.getNode()))
    expect(ours.getNode().nlink).toBe(theirs.getNode().nlink)
    expect(fs.volume._core.inodes[ours.ino]).toBe(ours.getNode())
  })

  it('follows a rename of the directory holding it (steps, getPath, reads through the new path)', async () => {
    const fs = memory()
    const { ours } = await pair(fs)
    fs.volume.mkdirSync('/top')
    fs.volume.renameSync('/d', '/top/e')
    expect(ours.getPath()).toBe('/top/e/ours.txt')
    expect(fs.volume.realpathSync('/top/e/ours.txt')).toBe('/top/e/ours.txt')
    expect(await fs.readText(await fs.resolve('/top/e/ours.txt'))).toBe('ours')
    await fs.writeText(await fs.resolve('/top/e/ours.txt'), 'again')
    expect(String(fs.volume.readFileSync('/top/e/ours.txt', 'utf8'))).toBe('again')
  })

  it('hard-links, unlinks and counts like memfs own', async () => {
    const fs = memory()
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
    // A non-recursive rmdir relies on the count.
    fs.volume.rmdirSync('/d')
    expect(fs.volume.existsSync('/d')).toBe(false)
  })

  it('is in toJSON, watched, and its directory stamped', async () => {
    const fs = memory()
    const seen: string[] = []
    const watcher = fs.volume.watch('/d', { persistent: false }, (event, name) => seen.push(`${event}:${String(name)}`))
    try {
      await fs.writeText(await fs.resolve('/d/ours.txt'), 'ours')
    } finally {
      watcher.close()
    }
    expect(seen).toContain('rename:ours.txt')
    expect(fs.volume.toJSON()).toMatchObject({ '/d/ours.txt': 'ours' })
    expect(fs.toJSON()).toMatchObject({ 'd/ours.txt': 'ours' })
  })
})
