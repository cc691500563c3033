import { describe, expect, it } from 'vitest'
import type { FsError } from '@seamfs/core'
import { FsVersion } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const N = 16

/** 'ok', or the code an operation failed with. */
async function codeOf(pending: Promise<unknown>): Promise<string> {
  try {
    await pending
    return 'ok'
  } catch (err) {
    return (err as FsError).code
  }
}

/** The failure of `pending` (which must fail). */
async function failureOf(pending: Promise<unknown>): Promise<FsError> {
  try {
    await pending
  } catch (err) {
    return err as FsError
  }
  throw new Error('expected a failure')
}

const at = async (fs: MemoryFileSystem, path: string) => fs.resolve(path)
const inodes = (fs: MemoryFileSystem): number => Object.keys(fs.volume._core.inodes).length

describe('toJSON after remove, rename and createDirectory', () => {
  it('modes, symlinks and empty directories survive; a moved file keeps its mode', async () => {
    const fs = new MemoryFileSystem({
      files: { 'src/a.ts': 'a', 'src/b.ts': 'b', 'bin/tool.sh': { content: '#!/bin/sh\n', mode: 0o755 }, 'link.ts': { symlink: 'src/a.ts' }, 'old/': null },
    })
    await fs.rename(await at(fs, 'bin/tool.sh'), await at(fs, 'scripts/tool.sh'))
    await fs.rename(await at(fs, 'src'), await at(fs, 'lib/src'))
    await fs.remove(await at(fs, 'old'))
    await fs.createDirectory(await at(fs, 'out/empty'))
    expect(fs.toJSON()).toEqual({
      'bin/': null,
      'lib/src/a.ts': 'a',
      'lib/src/b.ts': 'b',
      // The link keeps its text: it now dangles, as on a disk.
      'link.ts': { symlink: 'src/a.ts' },
      'out/empty/': null,
      'scripts/tool.sh': { content: '#!/bin/sh\n', mode: 0o755 },
    })
    expect(await fs.readText(await at(fs, 'lib/src/a.ts'))).toBe('a')
    expect(new MemoryFileSystem({ files: fs.toJSON() }).toJSON()).toEqual(fs.toJSON())
  })

  it('a recursive remove takes the links inside, never what they name, and releases the inodes of what it removed', async () => {
    const fs = new MemoryFileSystem({ files: { 'keep/k.txt': 'k', 'tree/own.txt': 'o', 'tree/sub/deep.txt': 'd', 'tree/to-keep': { symlink: '../keep' } } })
    const before = inodes(fs)
    expect(await fs.remove(await at(fs, 'tree'), { recursive: true })).toEqual({ type: 'directory', entries: 5 })
    expect(fs.toJSON()).toEqual({ 'keep/k.txt': 'k' })
    expect(inodes(fs)).toBe(before - 5)
  })

  it('removing through a symlink removes the file it names; the link stays', async () => {
    const fs = new MemoryFileSystem({ files: { 'real.txt': 'r', 'link.txt': { symlink: 'real.txt' } } })
    expect(await fs.remove(await at(fs, 'link.txt'))).toEqual({ type: 'file', entries: 1 })
    expect(fs.toJSON()).toEqual({ 'link.txt': { symlink: 'real.txt' } })
  })

  it('a rename over a file frees the replaced inode', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a', 'b.txt': 'b' } })
    const before = inodes(fs)
    expect((await fs.rename(await at(fs, 'a.txt'), await at(fs, 'b.txt'), { overwrite: true })).replaced).toBe(true)
    expect(fs.toJSON()).toEqual({ 'b.txt': 'a' })
    expect(inodes(fs)).toBe(before - 1)
  })

  it("a directory whose child count memfs's own rename has skewed is still removed whole", async () => {
    const fs = new MemoryFileSystem({ files: { 'd/a.txt': 'a', 'd/b.txt': 'b' } })
    fs.volume.renameSync('/d/a.txt', '/d/b.txt')
    expect(await fs.remove(await at(fs, 'd'), { recursive: true })).toEqual({ type: 'directory', entries: 2 })
    expect(fs.toJSON()).toEqual({})
  })
})

describe('refusals change nothing', () => {
  it('a tree above maxRemoveEntries is FS_TOO_LARGE with details, and nothing is removed', async () => {
    const fs = new MemoryFileSystem({ maxRemoveEntries: 3, files: { 't/a': 'a', 't/b': 'b', 't/c': 'c' } })
    const err = await failureOf(fs.remove(await at(fs, 't'), { recursive: true }))
    expect([err.code, err.details]).toEqual(['FS_TOO_LARGE', { entries: 4, limit: 3 }])
    expect(Object.keys(fs.toJSON())).toEqual(['t/a', 't/b', 't/c'])
  })

  it('the root directory is never removed: FS_PERMISSION_DENIED', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a' } })
    expect(await codeOf(fs.remove(await at(fs, '/'), { recursive: true }))).toBe('FS_PERMISSION_DENIED')
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a' })
  })

  it('a directory that grants no write permission keeps its tree: FS_PERMISSION_DENIED before anything goes', async () => {
    const fs = new MemoryFileSystem({ files: { 't/a.txt': 'a', 't/locked/b.txt': 'b' } })
    fs.volume.chmodSync('/t/locked', 0o555)
    expect(await codeOf(fs.remove(await at(fs, 't'), { recursive: true }))).toBe('FS_PERMISSION_DENIED')
    expect(await codeOf(fs.rename(await at(fs, 't/locked/b.txt'), await at(fs, 'b.txt')))).toBe('FS_PERMISSION_DENIED')
    expect(Object.keys(fs.toJSON())).toEqual(['t/a.txt', 't/locked/b.txt'])
  })

  it('a refused rename over a file keeps both files, and creates no parents', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a', 'x/b.txt': 'b', 'locked/': null } })
    fs.volume.chmodSync('/locked', 0o555)
    const stale = { version: FsVersion('0:0') }
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), await at(fs, 'x/b.txt'), { overwrite: stale }))).toBe('FS_STALE_VERSION')
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), await at(fs, 'new/dir/b.txt'), { expected: stale }))).toBe('FS_STALE_VERSION')
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), await at(fs, 'locked/a.txt')))).toBe('FS_PERMISSION_DENIED')
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a', 'locked/': null, 'x/b.txt': 'b' })
  })

  it('a file created on the way after resolve is FS_NOT_DIRECTORY for rename and createDirectory, and nothing moves', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a' } })
    const to = await at(fs, 'p/q/b.txt')
    const dir = await at(fs, 'p/q')
    fs.volume.writeFileSync('/p', 'now a file')
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), to))).toBe('FS_NOT_DIRECTORY')
    expect(await codeOf(fs.createDirectory(dir))).toBe('FS_NOT_DIRECTORY')
    expect(Object.keys(fs.toJSON())).toEqual(['a.txt', 'p'])
    expect(await fs.readText(await at(fs, 'a.txt'))).toBe('a')
  })
})

describe('versions', () => {
  it('a moved file keeps its version (the next stat of to); the name it left gets a new one when written again', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a' } })
    const before = (await fs.stat(await at(fs, 'a.txt')))?.version
    const outcome = await fs.rename(await at(fs, 'a.txt'), await at(fs, 'b.txt'))
    expect(outcome.version).toBe(before)
    expect((await fs.stat(await at(fs, 'b.txt')))?.version).toBe(outcome.version)
    const rewritten = await fs.writeText(await at(fs, 'a.txt'), 'a')
    expect(rewritten.version).not.toBe(before)
    // The moved content is guarded by its version under its new name.
    expect(await codeOf(fs.remove(await at(fs, 'b.txt'), { expected: { version: outcome.version } }))).toBe('ok')
  })

  it('the version of replaced or removed content never guards what later takes its name, even on a reused inode', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a', 'b.txt': 'b' } })
    const replaced = (await fs.stat(await at(fs, 'b.txt')))?.version as FsVersion
    await fs.rename(await at(fs, 'a.txt'), await at(fs, 'b.txt'), { overwrite: true })
    const removed = (await fs.stat(await at(fs, 'b.txt')))?.version as FsVersion
    await fs.remove(await at(fs, 'b.txt'))
    const recreated = await fs.writeText(await at(fs, 'b.txt'), 'a')
    expect(recreated.version.split(':')[0], 'memfs reuses the freed inode number').toBe(removed.split(':')[0])
    for (const version of [replaced, removed]) {
      expect(await codeOf(fs.remove(await at(fs, 'b.txt'), { expected: { version } }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(fs.rename(await at(fs, 'b.txt'), await at(fs, 'c.txt'), { expected: { version } }))).toBe('FS_STALE_VERSION')
    }
    expect(fs.toJSON()).toEqual({ 'b.txt': 'a' })
  })

  it('a write straight on the Volume stales the guard of a remove and of a rename', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a' } })
    const { version } = (await fs.stat(await at(fs, 'a.txt'))) ?? {}
    fs.volume.writeFileSync('/a.txt', 'b')
    const expected = { version: version as FsVersion }
    expect(await codeOf(fs.remove(await at(fs, 'a.txt'), { expected }))).toBe('FS_STALE_VERSION')
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), await at(fs, 'c.txt'), { expected }))).toBe('FS_STALE_VERSION')
    expect(fs.toJSON()).toEqual({ 'a.txt': 'b' })
  })
})

describe('races: exactly one wins', () => {
  it('N removers, guarded or not', async () => {
    const fs = new MemoryFileSystem({ files: { 'g.txt': 'g', 'u.txt': 'u' } })
    const expected = { version: (await fs.stat(await at(fs, 'g.txt')))?.version as FsVersion }
    const g = await at(fs, 'g.txt')
    const u = await at(fs, 'u.txt')
    const guarded = await Promise.all(Array.from({ length: N }, () => codeOf(fs.remove(g, { expected }))))
    const plain = await Promise.all(Array.from({ length: N }, () => codeOf(fs.remove(u))))
    expect(guarded.sort()).toEqual(['ok', ...Array<string>(N - 1).fill('FS_STALE_VERSION')].sort())
    expect(plain.sort()).toEqual(['ok', ...Array<string>(N - 1).fill('FS_NOT_FOUND')].sort())
    expect(fs.toJSON()).toEqual({})
  })

  it('N renamers of one file to different names, unguarded: the file ends under exactly one name', async () => {
    const fs = new MemoryFileSystem({ files: { 'src.txt': 'payload' } })
    const from = await at(fs, 'src.txt')
    const targets = await Promise.all(Array.from({ length: N }, (_, i) => at(fs, `d${i}/dst.txt`)))
    const codes = await Promise.all(targets.map((to) => codeOf(fs.rename(from, to))))
    expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
    expect(codes.filter((c) => c !== 'ok').every((c) => c === 'FS_NOT_FOUND')).toBe(true)
    // The losers created no parents: they failed before any change.
    expect(fs.toJSON()).toEqual({ [`d${codes.indexOf('ok')}/dst.txt`]: 'payload' })
  })

  it('renamers, removers and guarded writers of one version: exactly one wins and no content is lost or duplicated', async () => {
    const fs = new MemoryFileSystem({ files: { 'f.txt': 'v1' } })
    const t = await at(fs, 'f.txt')
    const expected = { version: (await fs.stat(t))?.version as FsVersion }
    const to = await at(fs, 'moved.txt')
    const ops = Array.from({ length: N }, (_, i) => {
      if (i % 3 === 0) return codeOf(fs.rename(t, to, { expected }))
      if (i % 3 === 1) return codeOf(fs.remove(t, { expected }))
      return codeOf(fs.writeText(t, `w${i}`, { expected: { kind: 'replaceIfVersion', version: expected.version } }))
    })
    const codes = await Promise.all(ops)
    expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
    expect(codes.filter((c) => c !== 'ok').every((c) => c === 'FS_STALE_VERSION')).toBe(true)
    const winner = codes.indexOf('ok')
    const expectedTree = winner % 3 === 0 ? { 'moved.txt': 'v1' } : winner % 3 === 1 ? {} : { 'f.txt': `w${winner}` }
    expect(fs.toJSON()).toEqual(expectedTree)
  })
})

describe('mtime and bytes', () => {
  it('stat, lstat and listDir report the clock stamped by writes; a rename keeps it', async () => {
    const now = Date.UTC(2030, 0, 1)
    const fs = new MemoryFileSystem({ clock: () => now, files: { 'l.txt': { symlink: 'd/a.txt' } } })
    await fs.writeText(await at(fs, 'd/a.txt'), 'a')
    expect((await fs.stat(await at(fs, 'd/a.txt')))?.mtime).toBe(now)
    expect((await fs.lstat('l.txt'))?.mtime).toEqual(expect.any(Number))
    const [entry] = await fs.listDir(await at(fs, 'd'))
    expect([entry?.mtime, entry?.size, entry?.version]).toEqual([now, 1, (await fs.stat(await at(fs, 'd/a.txt')))?.version])
    expect((await fs.listDir(await at(fs, '/'))).find((e) => e.name === 'l.txt')?.mtime).toBe(now)
    await fs.rename(await at(fs, 'd/a.txt'), await at(fs, 'b.txt'))
    expect((await fs.stat(await at(fs, 'b.txt')))?.mtime).toBe(now)
    expect(typeof (await fs.stat(await at(fs, 'd')))?.mtime).toBe('number')
  })

  it('readBytes hands out a copy; a stream opened before a write keeps the content it was opened on', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.bin': Uint8Array.of(1, 2, 3) } })
    const t = await at(fs, 'a.bin')
    ;(await fs.readBytes(t)).fill(0)
    expect(Array.from(await fs.readBytes(t))).toEqual([1, 2, 3])
    const stream = await fs.streamText(await at(fs, 'a.bin'))
    await fs.writeText(t, 'xyz')
    let text = ''
    for await (const chunk of stream) text += chunk
    expect(text).toBe('\u0001\u0002\u0003')
  })
})

describe('links that appear after resolve', () => {
  // A canonical key names no link: one that appeared at it or on its way since resolve is a
  // retryable FS_IO_ERROR (resolve again), never followed: it could lead out of a sandbox's roots.
  const retryable = async (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 'ok',
      (err: unknown) => ({ code: (err as { code?: string }).code, retryable: (err as { retryable?: boolean }).retryable }),
    )

  it('a rename onto a name that became a link is refused, retryable, and nothing moves; resolved again it replaces the link', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a', 'real.txt': 'old' } })
    const to = await at(fs, 'b.txt')
    fs.volume.symlinkSync('real.txt', '/b.txt')
    expect(await retryable(fs.rename(await at(fs, 'a.txt'), to, { overwrite: true }))).toEqual({ code: 'FS_IO_ERROR', retryable: true })
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a', 'b.txt': { symlink: 'real.txt' }, 'real.txt': 'old' })
    expect(await codeOf(fs.rename(await at(fs, 'a.txt'), await at(fs, 'b.txt')))).toBe('FS_NOT_OBSERVED')
    expect((await fs.rename(await at(fs, 'a.txt'), await at(fs, 'b.txt'), { overwrite: true })).replaced).toBe(true)
    expect(fs.toJSON()).toEqual({ 'b.txt': { symlink: 'real.txt' }, 'real.txt': 'a' })
  })

  it('a rename onto a name that became a link to the source itself moves nothing and loses nothing', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'a' } })
    const to = await at(fs, 'b.txt')
    fs.volume.symlinkSync('a.txt', '/b.txt')
    expect(await retryable(fs.rename(await at(fs, 'a.txt'), to, { overwrite: true }))).toEqual({ code: 'FS_IO_ERROR', retryable: true })
    expect(await retryable(fs.stat(to))).toEqual({ code: 'FS_IO_ERROR', retryable: true })
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a', 'b.txt': { symlink: 'a.txt' } })
  })

  it('a directory never moves into itself through a link made on the way since resolve', async () => {
    const fs = new MemoryFileSystem({ files: { 'd/f.txt': 'f' } })
    const to = await at(fs, 'x/moved')
    fs.volume.symlinkSync('d', '/x')
    expect(await retryable(fs.rename(await at(fs, 'd'), to))).toEqual({ code: 'FS_IO_ERROR', retryable: true })
    expect(await codeOf(fs.rename(await at(fs, 'd'), await at(fs, 'x/moved')))).toBe('FS_UNSUPPORTED')
    expect(fs.toJSON()).toEqual({ 'd/f.txt': 'f', x: { symlink: 'd' } })
  })

  it('reads, writes, edits and listings through a directory swapped for a link since resolve touch nothing there', async () => {
    const fs = new MemoryFileSystem({ files: { 'w/d/f.txt': 'inside', 'out/f.txt': 'outside', 'out/g/h.txt': 'h' } })
    const [file, dir, fresh, made] = [await at(fs, 'w/d/f.txt'), await at(fs, 'w/d'), await at(fs, 'w/d/new.txt'), await at(fs, 'w/d/g/k')]
    fs.volume.renameSync('/w/d', '/w/gone')
    fs.volume.symlinkSync('/out', '/w/d')
    for (const [i, call] of [
      fs.readText(file),
      fs.stat(file),
      fs.streamBytes(file),
      fs.listDir(dir),
      fs.writeText(fresh, 'x'),
      fs.writeText(file, 'x'),
      fs.editText(file, [{ oldString: 'outside', newString: 'x', replaceAll: false }]),
      fs.remove(file),
      fs.createDirectory(made),
    ].entries()) {
      // Each refused where the hook met the link: retryable (resolve again), nothing read or changed.
      expect([i, await retryable(call)]).toEqual([i, { code: 'FS_IO_ERROR', retryable: true }])
    }
    expect(fs.toJSON()).toEqual({ 'w/gone/f.txt': 'inside', 'w/d': { symlink: '/out' }, 'out/f.txt': 'outside', 'out/g/h.txt': 'h' })
  })
})
