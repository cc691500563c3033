/** MountFileSystem: routing, listings, read-only mounts, cross-mount rules, capabilities, and the layers above it. */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { MountFileSystem, SandboxedFileSystem, type FileSystem, type FsCapabilities, type FsTarget } from '@seamfs/core'
import { createFileTools, type FileTool, type GlobValue, type GrepValue, type ToolResult } from '@seamfs/tools'
import { expectFsErrorAsync } from './helpers.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-mounts-')))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Root memory (with a `mem/` directory the `/mem` mount shadows), `/mem`, `/memories`, and a read-only `/docs`. */
function table(options: { cwd?: string } = {}) {
  const root = new MemoryFileSystem({ files: { 'a.txt': 'root a', 'Z.txt': 'z', 'mem/secret.txt': 'shadowed', 'data/keep.txt': 'k', 'memx.txt': 'x' } })
  const mem = new MemoryFileSystem({ files: { 'm.txt': 'in mem' } })
  const memories = new MemoryFileSystem({ files: { 'note.md': 'remember TODO' } })
  const docs = new MemoryFileSystem({ files: { 'guide.md': 'read me TODO', 'sub/x.md': 'x' } })
  const fs = new MountFileSystem({ '/': root, '/mem': mem, '/memories': memories, '/docs': { fs: docs, readOnly: true } }, options)
  return { fs, root, mem, memories, docs }
}

const read = async (fs: FileSystem, path: string): Promise<string> => fs.readText(await fs.resolve(path))
const names = async (fs: FileSystem, path: string): Promise<string[]> => (await fs.listDir(await fs.resolve(path))).map((e) => e.name)

describe('MountFileSystem: construction', () => {
  const fs = new MemoryFileSystem()
  it.each([
    ['no /', { '/a': fs }, /mounted at "\/"/],
    ['/a/', { '/': fs, '/a/': fs }, /normalized/],
    ['/a/../b', { '/': fs, '/a/../b': fs }, /normalized/],
    ['a relative point', { '/': fs, a: fs }, /normalized/],
    ['//a', { '/': fs, '//a': fs }, /normalized/],
    ['a NUL', { '/': fs, '/a\0': fs }, /NUL/],
    ['no filesystem', { '/': fs, '/a': {} }, /needs a FileSystem/],
    ['a non-boolean readOnly', { '/': fs, '/a': { fs, readOnly: 'yes' } }, /readOnly/],
  ])('refuses %s', (_name, mounts, message) => {
    expect(() => new MountFileSystem(mounts as never)).toThrow(message)
    expect(() => new MountFileSystem(mounts as never)).toThrow(TypeError)
  })

  it('lists its mounts sorted by point, with readOnly', () => {
    const { fs: m, docs } = table()
    expect(m.mounts.map((x) => [x.point, x.readOnly])).toEqual([
      ['/', false],
      ['/docs', true],
      ['/mem', false],
      ['/memories', false],
    ])
    expect(m.mounts[1]?.fs).toBe(docs)
  })
})

describe('MountFileSystem: routing and listings', () => {
  it('a listing merges mount points as directories, in code-point order, shadowing a store directory', async () => {
    const { fs } = table()
    const entries = await fs.listDir(await fs.resolve('/'))
    expect(entries.map((e) => e.name)).toEqual(['Z.txt', 'a.txt', 'data', 'docs', 'mem', 'memories', 'memx.txt'])
    const mem = entries.find((e) => e.name === 'mem')
    expect(mem?.type).toBe('directory')
    expect(mem?.target.displayPath).toBe('/mem')
    expect(mem?.target.targetKey).toBe((await fs.resolve('/mem')).targetKey)
    expect(await names(fs, '/mem')).toEqual(['m.txt'])
    expect(await fs.readText(entries.find((e) => e.name === 'a.txt')?.target as FsTarget)).toBe('root a')
  })

  it('routes by the longest whole-segment prefix: /mem never takes /memories, nor /memx.txt', async () => {
    const { fs, mem, memories, root } = table()
    await fs.writeText(await fs.resolve('/memories/new.md'), 'to memories')
    await fs.writeText(await fs.resolve('/mem/new.md'), 'to mem')
    expect(await read(memories, '/new.md')).toBe('to memories')
    expect(await read(mem, '/new.md')).toBe('to mem')
    expect(await read(fs, '/memx.txt')).toBe('x')
    expect(await root.stat(await root.resolve('/memories'))).toBeUndefined()
  })

  it('.. crosses a mount point lexically, also from a cwd inside a mount', async () => {
    const { fs } = table({ cwd: '/mem' })
    expect(await read(fs, '/mem/../a.txt')).toBe('root a')
    expect(await read(fs, '../a.txt')).toBe('root a')
    expect(await read(fs, 'm.txt')).toBe('in mem')
    expect(await fs.readText(await fs.resolve('x.md', { cwd: '../docs/sub' }))).toBe('x')
    expect((await fs.resolve('/memories/../mem/./m.txt')).displayPath).toBe('/mem/m.txt')
  })

  it('a mount point shadows the parent store directory of the same name: stat is the mounted root', async () => {
    const { fs, mem } = table()
    await expectFsErrorAsync(read(fs, '/mem/secret.txt'), 'FS_NOT_FOUND')
    const info = await fs.stat(await fs.resolve('/mem'))
    expect(info?.type).toBe('directory')
    expect(info?.version).toBe((await mem.stat(await mem.resolve('/')))?.version)
    expect((await fs.lstat('/mem'))?.type).toBe('directory')
  })

  it('targets: displayPath in mount space, one key per file, a copy still works, errors name the mount-space path', async () => {
    const { fs } = table()
    const target = await fs.resolve('/mem/./m.txt')
    expect(target.displayPath).toBe('/mem/m.txt')
    expect((await fs.resolve(target.displayPath)).targetKey).toBe(target.targetKey)
    expect(target.targetKey).not.toBe((await fs.resolve('/memories/m.txt')).targetKey)
    expect(await fs.readText({ ...target })).toBe('in mem')
    const err = await expectFsErrorAsync(read(fs, '/memories/none.md'), 'FS_NOT_FOUND')
    expect(err.message).toContain('"/memories/none.md"')
    const gone = await fs.resolve('/mem/gone.txt')
    const stale = await expectFsErrorAsync(fs.editText(gone, { oldString: 'a', newString: 'b', replaceAll: false }), 'FS_STALE_VERSION')
    expect(stale.message).toContain('"/mem/gone.txt"')
  })
})

describe('MountFileSystem: mutations', () => {
  it('below a read-only mount every mutation is FS_PERMISSION_DENIED and nothing changes', async () => {
    const { fs, docs } = table()
    const before = docs.toJSON()
    const guide = await fs.resolve('/docs/guide.md')
    const version = (await fs.stat(guide))?.version
    const attempts: Array<Promise<unknown>> = [
      fs.writeText(guide, 'changed'),
      fs.writeText(await fs.resolve('/docs/new.md'), 'new'),
      fs.writeBytes(guide, new Uint8Array([1])),
      fs.editText(guide, { oldString: 'read', newString: 'write', replaceAll: false }),
      fs.remove(guide),
      fs.remove(await fs.resolve('/docs/sub'), { recursive: true }),
      fs.rename(guide, await fs.resolve('/docs/moved.md')),
      fs.rename(guide, guide),
      fs.rename(await fs.resolve('/a.txt'), await fs.resolve('/docs/a.txt')),
      fs.createDirectory(await fs.resolve('/docs/newdir')),
    ]
    for (const attempt of attempts) expect((await expectFsErrorAsync(attempt, 'FS_PERMISSION_DENIED')).message).toMatch(/read-only mount/)
    expect(docs.toJSON()).toEqual(before)
    expect((await fs.stat(guide))?.version).toBe(version)
    expect(await read(fs, '/docs/guide.md')).toBe('read me TODO')
  })

  it('a read-only mount refuses before its store is asked: no mutation hook runs', async () => {
    const calls: string[] = []
    const watched = new (class extends MemoryFileSystem {
      protected override publishBytes(...args: Parameters<MemoryFileSystem['publishBytes']>): ReturnType<MemoryFileSystem['publishBytes']> {
        calls.push('publish')
        return super.publishBytes(...args)
      }
      protected override removeTarget(...args: Parameters<MemoryFileSystem['removeTarget']>): ReturnType<MemoryFileSystem['removeTarget']> {
        calls.push('remove')
        return super.removeTarget(...args)
      }
      protected override makeDirectory(...args: Parameters<MemoryFileSystem['makeDirectory']>): ReturnType<MemoryFileSystem['makeDirectory']> {
        calls.push('mkdir')
        return super.makeDirectory(...args)
      }
    })({ files: { 'f.txt': 'f' } })
    const fs = new MountFileSystem({ '/': new MemoryFileSystem(), '/ro': { fs: watched, readOnly: true } })
    const f = await fs.resolve('/ro/f.txt')
    await expectFsErrorAsync(fs.writeText(f, 'x'), 'FS_PERMISSION_DENIED')
    await expectFsErrorAsync(fs.remove(f), 'FS_PERMISSION_DENIED')
    await expectFsErrorAsync(fs.createDirectory(await fs.resolve('/ro/d')), 'FS_PERMISSION_DENIED')
    expect(calls).toEqual([])
    await watched.writeText(await watched.resolve('/f.txt'), 'the store itself still writes')
    expect(calls).toEqual(['publish'])
  })

  it('a rename across mounts is FS_UNSUPPORTED and both names stay', async () => {
    const { fs } = table()
    const err = await expectFsErrorAsync(fs.rename(await fs.resolve('/a.txt'), await fs.resolve('/mem/a.txt')), 'FS_UNSUPPORTED')
    expect(err.message).toMatch(/across mounts/)
    await expectFsErrorAsync(fs.rename(await fs.resolve('/mem/m.txt'), await fs.resolve('/memories/m.txt')), 'FS_UNSUPPORTED')
    expect(await read(fs, '/a.txt')).toBe('root a')
    expect(await read(fs, '/mem/m.txt')).toBe('in mem')
    await expectFsErrorAsync(read(fs, '/mem/a.txt'), 'FS_NOT_FOUND')
  })

  it('renames and removes inside one mount go to its store', async () => {
    const { fs, mem } = table()
    await fs.rename(await fs.resolve('/mem/m.txt'), await fs.resolve('/mem/d/n.txt'))
    expect(await read(mem, '/d/n.txt')).toBe('in mem')
    expect((await fs.remove(await fs.resolve('/mem/d'), { recursive: true })).entries).toBe(2)
    expect(await names(fs, '/mem')).toEqual([])
  })

  it('a mount point, or a directory holding one, is never removed or renamed', async () => {
    const root = new MemoryFileSystem({ files: { 'data/keep.txt': 'k', 'data/sub/old.txt': 'o' } })
    const sub = new MemoryFileSystem({ files: { 's.txt': 's' } })
    const fs = new MountFileSystem({ '/': root, '/data/sub': sub, '/mem': new MemoryFileSystem() })
    const before = [root.toJSON(), sub.toJSON()]
    const refusals: Array<[() => Promise<unknown>, RegExp]> = [
      [async () => fs.remove(await fs.resolve('/data/sub'), { recursive: true }), /mount point cannot/],
      [async () => fs.remove(await fs.resolve('/mem')), /mount point cannot/],
      [async () => fs.remove(await fs.resolve('/data'), { recursive: true }), /holds the mount point "\/data\/sub"/],
      [async () => fs.remove(await fs.resolve('/data')), /holds the mount point/],
      // The table's root is the store's root: core's root rule refuses it first, as on every backend.
      [async () => fs.remove(await fs.resolve('/'), { recursive: true }), /root directory cannot be removed/],
      [async () => fs.rename(await fs.resolve('/mem'), await fs.resolve('/mem2')), /mount point cannot/],
      [async () => fs.rename(await fs.resolve('/data'), await fs.resolve('/data2')), /holds the mount point/],
      [async () => fs.rename(await fs.resolve('/data/keep.txt'), await fs.resolve('/data/sub')), /mount point cannot/],
      [async () => fs.rename(await fs.resolve('/data/keep.txt'), await fs.resolve('/'), { overwrite: true }), /root directory cannot be removed or moved/],
    ]
    for (const [attempt, message] of refusals) expect((await expectFsErrorAsync(attempt(), 'FS_PERMISSION_DENIED')).message).toMatch(message)
    expect([root.toJSON(), sub.toJSON()]).toEqual(before)
    expect((await fs.remove(await fs.resolve('/data/keep.txt'))).entries).toBe(1)
  })
})

describe('MountFileSystem: contains, capabilities, URLs, close', () => {
  it('contains: the store within a mount, lexical across mounts', async () => {
    const { fs } = table()
    const [top, mem, memFile, memoriesFile, a] = await Promise.all(['/', '/mem', '/mem/m.txt', '/memories/x', '/a.txt'].map((p) => fs.resolve(p)))
    if (!top || !mem || !memFile || !memoriesFile || !a) throw new Error('unreachable')
    expect(fs.contains(top, memFile)).toBe(true)
    expect(fs.contains(top, memoriesFile)).toBe(true)
    expect(fs.contains(mem, memFile)).toBe(true)
    expect(fs.contains({ ...mem }, { ...memFile })).toBe(true)
    expect(fs.contains(mem, memoriesFile)).toBe(false)
    expect(fs.contains(mem, a)).toBe(false)
    expect(fs.contains(memFile, mem)).toBe(false)
    expect(fs.contains(a, memFile)).toBe(false)
  })

  it('capabilities are the weakest over the mounts; capabilitiesAt gives the store of a target', async () => {
    const cwd = tempDir()
    const local = new LocalFileSystem({ cwd })
    const memory = new MemoryFileSystem()
    const caps: FsCapabilities = { ...memory.capabilities, rename: 'copy', createDirectory: 'marker', mtime: false }
    const copying = new (class extends MemoryFileSystem {
      override readonly capabilities = caps
    })()
    const { rename: _dropped, ...noRenameCaps } = memory.capabilities
    const noRename = new (class extends MemoryFileSystem {
      override readonly capabilities = noRenameCaps
    })()
    const fs = new MountFileSystem({ '/': memory, '/local': local, '/copy': copying })
    // Local's guards hold among seamfs writers, memory's by the store: the weaker is seamfs's.
    expect(fs.capabilities).toMatchObject({ processPath: false, replaceIfVersion: 'seamfs', versionSource: 'content-hash', rename: 'copy' })
    const processOnly = new (class extends MemoryFileSystem {
      override readonly capabilities: FsCapabilities = { ...memory.capabilities, replaceIfVersion: 'process' }
    })()
    expect(new MountFileSystem({ '/': local, '/p': processOnly }).capabilities.replaceIfVersion).toBe('process')
    expect(fs.capabilities).toMatchObject({ createDirectory: 'marker', mtime: false, remove: true, symlinks: true })
    expect(new MountFileSystem({ '/': memory, '/x': noRename }).capabilities.rename).toBeUndefined()
    expect(new MountFileSystem({ '/': memory, '/x': new MemoryFileSystem() }).capabilities.versionSource).toBe('generation')
    expect(fs.capabilitiesAt(await fs.resolve('/local/f.txt'))).toBe(local.capabilities)
    expect(fs.capabilitiesAt(await fs.resolve('/copy/f.txt')).rename).toBe('copy')
    expect(fs.capabilitiesAt(await fs.resolve('/f.txt'))).toBe(memory.capabilities)
    await expectFsErrorAsync((async () => fs.processPath(await fs.resolve('/local/f.txt')))(), 'FS_UNSUPPORTED')
  })

  it('processPath is the store path where every mount has one', async () => {
    const [a, b] = [tempDir(), tempDir()]
    const fs = new MountFileSystem({ '/': new LocalFileSystem({ cwd: a }), '/b': new LocalFileSystem({ cwd: b }) })
    expect(fs.capabilities.processPath).toBe(true)
    expect(fs.processPath(await fs.resolve('/b/x.txt'))).toBe(join(b, 'x.txt'))
    await fs.writeText(await fs.resolve('/b/x.txt'), 'on disk')
    expect(readFileSync(join(b, 'x.txt'), 'utf8')).toBe('on disk')
  })

  it('fileUrl: the store URL for the only mount of its class, else seamfs-mount:, distinct either way', async () => {
    const cwd = tempDir()
    const fs = new MountFileSystem({ '/': new MemoryFileSystem(), '/m': new MemoryFileSystem(), '/l': new LocalFileSystem({ cwd }) })
    expect(fs.fileUrl(await fs.resolve('/l/a b.txt'))).toBe(new URL(`file://${cwd}/a%20b.txt`).href)
    const [top, inner] = [fs.fileUrl(await fs.resolve('/a.txt')), fs.fileUrl(await fs.resolve('/m/a.txt'))]
    expect([top, inner]).toEqual(['seamfs-mount:/a.txt', 'seamfs-mount:/m/a.txt'])
    expect(fs.fileUrl(await fs.resolve('/m/a#b?.txt'))).toBe('seamfs-mount:/m/a%23b%3F.txt')
  })

  it('close closes each mounted filesystem once, also one mounted twice', async () => {
    const closed: string[] = []
    const counting = (name: string): MemoryFileSystem =>
      new (class extends MemoryFileSystem {
        override async close(): Promise<void> {
          closed.push(name)
        }
      })()
    const twice = counting('twice')
    await new MountFileSystem({ '/': counting('root'), '/a': twice, '/b': twice, '/c': counting('c') }).close()
    expect(closed.sort()).toEqual(['c', 'root', 'twice'])
  })
})

describe('MountFileSystem: layers above it', () => {
  it('a sandbox whose roots span mounts allows writes inside both, denies outside', async () => {
    const cwd = tempDir()
    const root = new MemoryFileSystem({ files: { 'work/': null, 'outside.txt': 'o' } })
    const mounts = new MountFileSystem({ '/': root, '/local': new LocalFileSystem({ cwd }), '/docs': { fs: new MemoryFileSystem(), readOnly: true } })
    const fs = new SandboxedFileSystem(mounts, { mode: 'workspace-write', workspaceRoot: '/work', writableRoots: ['/local', '/docs'] })
    await fs.writeText(await fs.resolve('a.txt'), 'in work')
    await fs.writeText(await fs.resolve('/local/b.txt'), 'in local')
    await fs.writeText(await fs.resolve('../local/c.txt'), 'via ..')
    expect(await read(root, '/work/a.txt')).toBe('in work')
    expect(readFileSync(join(cwd, 'b.txt'), 'utf8')).toBe('in local')
    expect(readFileSync(join(cwd, 'c.txt'), 'utf8')).toBe('via ..')
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/outside.txt'), 'no'), 'FS_SANDBOX_DENIED')
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/mem2/x.txt'), 'no'), 'FS_SANDBOX_DENIED')
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/docs/x.txt'), 'no'), 'FS_PERMISSION_DENIED')
    await expectFsErrorAsync(fs.rename(await fs.resolve('a.txt'), await fs.resolve('/local/a.txt')), 'FS_UNSUPPORTED')
    expect(await read(root, '/outside.txt')).toBe('o')
  })

  it('a link in a mounted store that leads out of its root is outside the mount space: the sandbox denies it', async () => {
    const [inside, outside] = [tempDir(), tempDir()]
    writeFileSync(join(outside, 'secret.txt'), 'secret')
    symlinkSync(outside, join(inside, 'out'))
    const mounts = new MountFileSystem({ '/': new MemoryFileSystem(), '/local': new LocalFileSystem({ cwd: inside }) })
    const fs = new SandboxedFileSystem(mounts, { mode: 'workspace-write', workspaceRoot: '/' })
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/local/out/new.txt'), 'no'), 'FS_SANDBOX_DENIED')
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/local/out/secret.txt'), 'no'), 'FS_SANDBOX_DENIED')
    await expectFsErrorAsync(
      fs.readText(await fs.resolve('/local/out/secret.txt')).then(() => undefined),
      'FS_SANDBOX_DENIED',
    )
    expect(readdirSync(outside)).toEqual(['secret.txt'])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret')
    await fs.writeText(await fs.resolve('/local/fine.txt'), 'ok')
    expect(readFileSync(join(inside, 'fine.txt'), 'utf8')).toBe('ok')
  })

  it('glob and grep walk across mount points', async () => {
    const { fs } = table()
    const tools = createFileTools({ fs })
    const tool = (name: string): FileTool => tools.find((t) => t.name === name) as FileTool
    const glob = (await tool('glob').execute({ pattern: '**/*.md' })) as ToolResult<GlobValue>
    expect(glob.value?.paths).toEqual(['docs/guide.md', 'docs/sub/x.md', 'memories/note.md'])
    const grep = (await tool('grep').execute({ pattern: 'TODO' })) as ToolResult<GrepValue>
    expect(grep.value?.matches.map((m) => m.path)).toEqual(['docs/guide.md', 'memories/note.md'])
  })
})
