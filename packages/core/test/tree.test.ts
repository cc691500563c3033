/**
 * `listTree` through the layers: a mount table lists across mount points what `listDir` shows of each
 * directory (a shadowed store entry left out, a mount point whose parent is listed in, with its own
 * tree), and the sandbox fences a tree listing as it fences a listing, over a store that lists trees
 * at once (its listing of the fresh root, each entry leading out shown as `other`) and over one that
 * does not (a walk of its own fenced listings).
 */
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem, type MemoryEntry } from '@seamfs/backend-memory'
import { MountFileSystem, SandboxedFileSystem, type FileSystem, type FsCapabilities, type FsTreeEntry } from '@seamfs/core'
import { expectFsErrorAsync } from './helpers.js'

/** A memory store that says it lists trees at once (core's default walk does the listing). */
class NativeTrees extends MemoryFileSystem {
  override readonly capabilities: FsCapabilities = { ...new MemoryFileSystem().capabilities, listTree: 'native' }
}

async function treeOf(fs: FileSystem, path: string): Promise<FsTreeEntry[]> {
  const out: FsTreeEntry[] = []
  for await (const page of await fs.listTree(await fs.resolve(path))) out.push(...page)
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** What `listDir` shows of `path` and of every directory below it that is no link, as `[path, type, key]`. */
async function walkOf(fs: FileSystem, path: string, prefix = ''): Promise<[string, string, string][]> {
  const out: [string, string, string][] = []
  for (const entry of await fs.listDir(await fs.resolve(path))) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    out.push([rel, entry.type, entry.target.targetKey])
    const child = `${path.replace(/\/$/, '')}/${entry.name}`
    if (entry.type === 'directory' && (await fs.lstat(child))?.type !== 'symlink') out.push(...(await walkOf(fs, child, rel)))
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
}

const shape = (tree: FsTreeEntry[]): [string, string, string][] => tree.map((e) => [e.path, e.type, e.target.targetKey])

describe('listTree across mount points', () => {
  function table(native: boolean) {
    const make = (files: Record<string, MemoryEntry>): MemoryFileSystem => (native ? new NativeTrees({ files }) : new MemoryFileSystem({ files }))
    const root = make({ 'a.txt': 'a', 'mem/shadowed.txt': 'never listed', 'mem/deep/x.txt': 'never listed', 'data/k.txt': 'k', l: { symlink: '/data' } })
    const mem = make({ 'm.txt': 'm', 'sub/n.txt': 'n' })
    const nested = make({ 'inner.txt': 'i' })
    const orphan = make({ 'o.txt': 'o' })
    return new MountFileSystem({ '/': root, '/mem': mem, '/mem/sub/nest': nested, '/nowhere/o': orphan })
  }

  it.each([false, true])('lists what listDir shows, mount by mount, shadowed entries left out (native stores: %s)', async (native) => {
    const fs = table(native)
    expect(fs.capabilities.listTree).toBe(native ? 'native' : 'walk')
    const tree = await treeOf(fs, '/')
    expect(tree.map((e) => e.path)).toEqual([
      'a.txt',
      'data',
      'data/k.txt',
      'l',
      'mem',
      'mem/m.txt',
      'mem/sub',
      'mem/sub/n.txt',
      'mem/sub/nest',
      'mem/sub/nest/inner.txt',
    ])
    expect(shape(tree)).toEqual(await walkOf(fs, '/'))
    expect(tree.find((e) => e.path === 'l')?.link).toBe(true)
    // Each target is the mount table's: it reads back through it.
    const inner = tree.find((e) => e.path === 'mem/sub/nest/inner.txt')
    expect(inner?.target.displayPath).toBe('/mem/sub/nest/inner.txt')
    expect(await fs.readText(inner!.target)).toBe('i')
    expect(shape(await treeOf(fs, '/mem'))).toEqual(await walkOf(fs, '/mem'))
    expect((await treeOf(fs, '/mem/sub')).map((e) => e.path)).toEqual(['n.txt', 'nest', 'nest/inner.txt'])
  })

  it('a missing directory is FS_NOT_FOUND, a file FS_NOT_DIRECTORY, named in mount space', async () => {
    const fs = table(true)
    const missing = await expectFsErrorAsync(fs.listTree(await fs.resolve('/mem/none')), 'FS_NOT_FOUND')
    expect(missing.path).toBe('/mem/none')
    await expectFsErrorAsync(fs.listTree(await fs.resolve('/mem/m.txt')), 'FS_NOT_DIRECTORY')
  })
})

describe('listTree behind the sandbox', () => {
  const files: Record<string, MemoryEntry> = {
    'ws/src/a.txt': 'a',
    'ws/src/deep/b.txt': 'b',
    'ws/out-file': { symlink: '/outside/secret.txt' },
    'ws/out-dir': { symlink: '/outside' },
    'ws/in-dir': { symlink: '/ws/src' },
    'outside/secret.txt': 'secret',
    'outside/more/c.txt': 'c',
  }

  it.each([false, true])('lists the inside; an entry leading out is other, with nothing of what it leads to (native inner: %s)', async (native) => {
    const inner = native ? new NativeTrees({ files }) : new MemoryFileSystem({ files })
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/ws' })
    const tree = await treeOf(fs, '/ws')
    expect(tree.map((e) => [e.path, e.type, e.link === true])).toEqual([
      ['in-dir', 'directory', true],
      ['out-dir', 'other', false],
      ['out-file', 'other', false],
      ['src', 'directory', false],
      ['src/a.txt', 'file', false],
      ['src/deep', 'directory', false],
      ['src/deep/b.txt', 'file', false],
    ])
    for (const e of tree.filter((t) => t.type === 'other')) expect([e.size, e.version, e.mtime]).toEqual([undefined, undefined, undefined])
    expect(shape(tree)).toEqual(await walkOf(fs, '/ws'))
  })

  it.each([false, true])('a root outside the sandbox is FS_SANDBOX_DENIED, whatever the path leads through (native inner: %s)', async (native) => {
    const inner = native ? new NativeTrees({ files }) : new MemoryFileSystem({ files })
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/ws' })
    await expectFsErrorAsync(fs.listTree(await inner.resolve('/outside')), 'FS_SANDBOX_DENIED')
    await expectFsErrorAsync(fs.listTree(await inner.resolve('/ws/out-dir')), 'FS_SANDBOX_DENIED')
  })

  it('a recursive remove is refused for a protected name anywhere below, found through the tree listing', async () => {
    const inner = new NativeTrees({ files: { 'ws/pkg/deep/er/.git/config': 'x', 'ws/pkg/a.txt': 'a' } })
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/ws' })
    await expectFsErrorAsync(fs.remove(await fs.resolve('pkg'), { recursive: true }), 'FS_SANDBOX_DENIED')
    expect(await inner.readText(await inner.resolve('/ws/pkg/a.txt'))).toBe('a')
    const small = new SandboxedFileSystem(new NativeTrees({ files: { 'ws/t/a': 'a', 'ws/t/b/c': 'c' }, maxRemoveEntries: 2 }), {
      mode: 'workspace-write',
      workspaceRoot: '/ws',
    })
    await expectFsErrorAsync(small.remove(await small.resolve('t'), { recursive: true }), 'FS_TOO_LARGE')
  })
})

describe('the default walk is lazy', () => {
  /** A memory store that counts the directories it is asked to list. */
  class CountingLists extends MemoryFileSystem {
    lists = 0
    protected override listEntries(...args: Parameters<MemoryFileSystem['listEntries']>): ReturnType<MemoryFileSystem['listEntries']> {
      this.lists++
      return super.listEntries(...args)
    }
  }

  it('a caller that stops after the first pages stops the walk within a batch, even in a wide level', async () => {
    const files: Record<string, string> = {}
    for (let d = 0; d < 64; d++) for (let f = 0; f < 50; f++) files[`wide/d${d}/f${f}.txt`] = 'x'
    const fs = new CountingLists({ files })
    const pages = await fs.listTree(await fs.resolve('/wide'))
    let seen = 0
    for await (const page of pages) {
      seen += page.length
      if (seen > 500) break
    }
    // The root, then batches of 8 directories (400 entries each): stopped after the second batch.
    expect(fs.lists).toBeLessThanOrEqual(1 + 16)
    // Walked to the end, every entry is there once.
    fs.lists = 0
    const all = await treeOf(fs, '/wide')
    expect(all).toHaveLength(64 + 64 * 50)
    expect(new Set(all.map((e) => e.path)).size).toBe(all.length)
    expect(fs.lists).toBe(65)
  })

  it('a recursive remove past maxRemoveEntries through the sandbox lists no more than a batch past the bound, and removes nothing', async () => {
    const files: Record<string, string> = {}
    for (let d = 0; d < 64; d++) for (let f = 0; f < 50; f++) files[`w/wide/d${d}/f${f}.txt`] = 'x'
    const inner = new CountingLists({ files, maxRemoveEntries: 300 })
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w' })
    inner.lists = 0
    await expectFsErrorAsync(fs.remove(await fs.resolve('wide'), { recursive: true }), 'FS_TOO_LARGE')
    expect(inner.lists).toBeLessThanOrEqual(1 + 8)
    expect(await fs.listDir(await fs.resolve('wide'))).toHaveLength(64)
  })
})
