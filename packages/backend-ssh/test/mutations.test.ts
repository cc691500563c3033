/**
 * remove, rename and createDirectory against the real OpenSSH sshd: the basics, the guards,
 * the recursive bound, the root fence on both ends, and the requests each one sends.
 */
import { beforeEach, describe, expect, inject, it } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { FsTargetKey, FsVersion, isFsError, type FsTarget } from '@seamfs/core/backend'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { countingClient, titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')
const jailed = inject('sftpChroot')

const text = (bytes: Buffer): string => bytes.toString()

describe.skipIf(server === null)(titled('SftpFileSystem: remove, rename, createDirectory', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let outside: string
  let fs: SftpFileSystem

  suiteScratch(server, 'mut-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    outside = await raw.freshDir(base, 'outside-')
    fs = new SftpFileSystem({ ...server, root })
    return async () => fs.close()
  })

  const put = (path: string, content: string): Promise<void> => raw.writeInPlace(`${root}/${path}`, Buffer.from(content))
  const at = (path: string): Promise<FsTarget> => fs.resolve(path)

  describe('basics', () => {
    it('remove: a file, an empty directory; missing is FS_NOT_FOUND; a non-empty directory FS_NOT_EMPTY, nothing removed', async () => {
      await put('a.txt', 'a')
      await put('d/keep.txt', 'k')
      await raw.mkdirp(`${root}/empty`)
      expect(await fs.remove(await at('a.txt'))).toEqual({ type: 'file', entries: 1 })
      expect(await fs.remove(await at('empty'))).toEqual({ type: 'directory', entries: 1 })
      expect(await codeOf(fs.remove(await at('a.txt')))).toBe('FS_NOT_FOUND')
      expect(await codeOf(fs.remove(await at('d')))).toBe('FS_NOT_EMPTY')
      expect(await raw.names(root)).toEqual(['d'])
      expect(await raw.names(`${root}/d`)).toEqual(['keep.txt'])
    })

    it('recursive remove takes the tree down, unlinks the links inside without following them, and counts', async () => {
      await put('keep.txt', 'keep')
      await put('t/a.txt', 'a')
      await put('t/sub/b.txt', 'b')
      await put('t/sub/deeper/c.txt', 'c')
      await raw.symlink(`${root}/t/link-file`, `${root}/keep.txt`)
      await raw.symlink(`${root}/t/sub/link-dir`, outside)
      await raw.writeInPlace(`${outside}/o.txt`, Buffer.from('o'))
      // t, a.txt, link-file, sub, b.txt, link-dir, deeper, c.txt
      expect(await fs.remove(await at('t'), { recursive: true })).toEqual({ type: 'directory', entries: 8 })
      expect(await raw.names(root)).toEqual(['keep.txt'])
      expect(await raw.names(outside)).toEqual(['o.txt'])
      expect(text(await raw.read(`${root}/keep.txt`))).toBe('keep')
    })

    it('a target resolved through a link removes the file it names; the link stays', async () => {
      await put('real.txt', 'r')
      await raw.symlink(`${root}/alias`, `${root}/real.txt`)
      expect(await fs.remove(await at('alias'))).toEqual({ type: 'file', entries: 1 })
      expect(await raw.names(root)).toEqual(['alias'])
    })

    it('rename: to a new name under missing parents; the version moves with the content, mtime too', async () => {
      await put('a.txt', 'content')
      const before = (await fs.stat(await at('a.txt')))!
      const outcome = await fs.rename(await at('a.txt'), await at('x/y/b.txt'))
      expect(outcome).toEqual({ type: 'file', replaced: false, version: before.version })
      const after = (await fs.stat(await at('x/y/b.txt')))!
      expect(after.version).toBe(outcome.version)
      expect(after.mtime).toBe(before.mtime)
      expect(await raw.names(root)).toEqual(['x'])
      expect(text(await raw.read(`${root}/x/y/b.txt`))).toBe('content')
    })

    it('rename onto an existing file: FS_NOT_OBSERVED without overwrite, both unchanged; overwrite replaces', async () => {
      await put('a.txt', 'A')
      await put('b.txt', 'B')
      expect(await codeOf(fs.rename(await at('a.txt'), await at('b.txt')))).toBe('FS_NOT_OBSERVED')
      expect([text(await raw.read(`${root}/a.txt`)), text(await raw.read(`${root}/b.txt`))]).toEqual(['A', 'B'])
      const outcome = await fs.rename(await at('a.txt'), await at('b.txt'), { overwrite: true })
      expect(outcome.replaced).toBe(true)
      expect(await raw.names(root)).toEqual(['b.txt'])
      expect(text(await raw.read(`${root}/b.txt`))).toBe('A')
      expect((await fs.stat(await at('b.txt')))?.version).toBe(outcome.version)
    })

    it('a directory at the destination is never replaced; a directory moves with its content', async () => {
      await put('a.txt', 'A')
      await put('src/inner/f.txt', 'f')
      await raw.mkdirp(`${root}/dir`)
      expect(await codeOf(fs.rename(await at('a.txt'), await at('dir')))).toBe('FS_NOT_OBSERVED')
      expect(await codeOf(fs.rename(await at('a.txt'), await at('dir'), { overwrite: true }))).toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(fs.rename(await at('src'), await at('dir')))).toBe('FS_NOT_OBSERVED')
      const outcome = await fs.rename(await at('src'), await at('moved/src'))
      expect(outcome.type).toBe('directory')
      expect((await fs.stat(await at('moved/src')))?.version).toBe(outcome.version)
      expect(text(await raw.read(`${root}/moved/src/inner/f.txt`))).toBe('f')
      expect(await raw.names(root)).toEqual(['a.txt', 'dir', 'moved'])
    })

    it('createDirectory: mkdir -p, idempotent; a file at the path or on the way is FS_NOT_DIRECTORY', async () => {
      expect(await fs.createDirectory(await at('p/q/r'))).toEqual({ created: true })
      expect(await fs.createDirectory(await at('p/q/r'))).toEqual({ created: false })
      expect(await fs.createDirectory(await at('.'))).toEqual({ created: false })
      expect((await fs.stat(await at('p/q/r')))?.type).toBe('directory')
      await put('f.txt', 'f')
      expect(await codeOf(fs.createDirectory(await at('f.txt')))).toBe('FS_NOT_DIRECTORY')
      expect(await raw.names(root)).toEqual(['f.txt', 'p'])
    })

    it('mtime: the server mtime (whole seconds) in ms, alike in stat, lstat and listDir', async () => {
      await put('m.txt', 'm')
      await raw.mkdirp(`${root}/md`)
      await raw.call((cb) => raw.sftp.utimes(`${root}/m.txt`, 1_700_000_000, 1_700_000_001, cb))
      const t = await at('m.txt')
      expect((await fs.stat(t))?.mtime).toBe(1_700_000_001_000)
      expect((await fs.lstat('m.txt'))?.mtime).toBe(1_700_000_001_000)
      const listed = await fs.listDir(await at('.'))
      expect(listed.find((e) => e.name === 'm.txt')?.mtime).toBe(1_700_000_001_000)
      const dirMtime = (await fs.stat(await at('md')))?.mtime
      expect(dirMtime).toBeGreaterThan(1_700_000_001_000)
      expect(listed.find((e) => e.name === 'md')?.mtime).toBe(dirMtime)
      expect(fs.capabilities).toMatchObject({ remove: true, rename: 'atomic', renameDirectories: true, createDirectory: 'native', mtime: true })
    })
  })

  describe('guards', () => {
    it('remove and rename with a stale version are FS_STALE_VERSION and change nothing; the current one works', async () => {
      await put('g.txt', 'one')
      const t = await at('g.txt')
      const stale = (await fs.stat(t))!.version
      await put('g.txt', 'two')
      expect(await codeOf(fs.remove(t, { expected: { version: stale } }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(fs.rename(t, await at('h.txt'), { expected: { version: stale } }))).toBe('FS_STALE_VERSION')
      expect(await raw.names(root)).toEqual(['g.txt'])
      const current = (await fs.stat(t))!.version
      await fs.rename(t, await at('h.txt'), { expected: { version: current } })
      expect(await codeOf(fs.remove(t, { expected: { version: current } }))).toBe('FS_STALE_VERSION')
      await fs.remove(await at('h.txt'), { expected: { version: current } })
      expect(await raw.names(root)).toEqual([])
    })

    it('overwrite { version } replaces only that version of the destination', async () => {
      await put('a.txt', 'A')
      await put('b.txt', 'B')
      const b = await at('b.txt')
      const old = (await fs.stat(b))!.version
      await put('b.txt', 'B2')
      expect(await codeOf(fs.rename(await at('a.txt'), b, { overwrite: { version: old } }))).toBe('FS_STALE_VERSION')
      expect([text(await raw.read(`${root}/a.txt`)), text(await raw.read(`${root}/b.txt`))]).toEqual(['A', 'B2'])
      await fs.rename(await at('a.txt'), b, { overwrite: { version: (await fs.stat(b))!.version } })
      expect(text(await raw.read(`${root}/b.txt`))).toBe('A')
      // A missing destination is created whatever `overwrite` says.
      await fs.rename(b, await at('c.txt'), { overwrite: { version: old } })
      expect(await raw.names(root)).toEqual(['c.txt'])
    })

    it("a guard on a directory names stat's version: another is FS_STALE_VERSION, a file in its place is never removed", async () => {
      await put('d/f.txt', 'f')
      const d = await at('d')
      const version = (await fs.stat(d))!.version
      const other = { version: FsVersion(`${version}x`) }
      expect(await codeOf(fs.remove(d, { expected: other, recursive: true }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(fs.rename(d, await at('e'), { expected: other }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(fs.remove(d, { expected: { version } })), 'not empty, guarded by its own version').toBe('FS_NOT_EMPTY')
      expect(await raw.names(root)).toEqual(['d'])
      expect(await fs.rename(d, await at('e'), { expected: { version } })).toMatchObject({ type: 'directory', replaced: false })
      const moved = (await fs.stat(await at('e')))!.version
      await raw.rmrf(`${root}/e`)
      await put('e', 'a file now')
      expect(await codeOf(fs.remove(await at('e'), { expected: { version: moved }, recursive: true }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(fs.rename(await at('e'), await at('g'), { expected: { version: moved } }))).toBe('FS_STALE_VERSION')
      expect(text(await raw.read(`${root}/e`))).toBe('a file now')
      await raw.rmrf(`${root}/e`)
      await put('e/f.txt', 'f')
      const now = (await fs.stat(await at('e')))!.version
      expect(await fs.remove(await at('e'), { expected: { version: now }, recursive: true })).toEqual({ type: 'directory', entries: 2 })
      expect(await raw.names(root)).toEqual([])
    })

    it('an aborted signal changes nothing', async () => {
      await put('d/f.txt', 'f')
      const d = await at('d')
      const aborted = AbortSignal.abort()
      expect(await codeOf(fs.remove(d, { recursive: true, signal: aborted }))).toBe('FS_ABORTED')
      expect(await codeOf(fs.rename(d, await at('e'), { signal: aborted }))).toBe('FS_ABORTED')
      expect(await raw.names(root)).toEqual(['d'])
    })
  })

  describe('the recursive bound', () => {
    it('a tree above maxRemoveEntries is FS_TOO_LARGE with { entries, limit }, nothing removed; one at the bound goes', async () => {
      // big, f0..f3, sub, sub/g0, sub/g1: 8 entries.
      for (let i = 0; i < 4; i++) await put(`big/f${i}.txt`, 'x')
      await put('big/sub/g0.txt', 'x')
      await put('big/sub/g1.txt', 'x')
      const seven = new SftpFileSystem({ ...server!, root, maxRemoveEntries: 7 })
      const eight = new SftpFileSystem({ ...server!, root, maxRemoveEntries: 8 })
      const big = await at('big')
      const refused = await seven.remove(big, { recursive: true }).catch((err: unknown) => err)
      expect(isFsError(refused, 'FS_TOO_LARGE')).toBe(true)
      expect((refused as { details?: unknown }).details).toMatchObject({ limit: 7 })
      expect((refused as { details: { entries: number } }).details.entries).toBeGreaterThan(7)
      expect(await raw.names(`${root}/big`)).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'sub'])
      expect(await raw.names(`${root}/big/sub`)).toEqual(['g0.txt', 'g1.txt'])
      expect(await eight.remove(big, { recursive: true })).toEqual({ type: 'directory', entries: 8 })
      expect(await raw.names(root)).toEqual([])
      await Promise.all([seven.close(), eight.close()])
    })
  })

  describe('the root fence', () => {
    it("the root itself is neither removed nor moved nor replaced (core's root rule: FS_PERMISSION_DENIED)", async () => {
      await put('a.txt', 'a')
      const top = await at('.')
      expect(await codeOf(fs.remove(top, { recursive: true }))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.rename(top, await at('sub/x')))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.rename(await at('a.txt'), top, { overwrite: true }))).toBe('FS_PERMISSION_DENIED')
      expect(await raw.names(root)).toEqual(['a.txt'])
    })

    it('forged targets outside the root are refused on either end, before any request', async () => {
      await put('a.txt', 'a')
      await raw.writeInPlace(`${outside}/o.txt`, Buffer.from('o'))
      const forged = { targetKey: FsTargetKey(`${outside}/o.txt`), displayPath: 'o.txt' }
      const fresh = { targetKey: FsTargetKey(`${outside}/new.txt`), displayPath: 'new.txt' }
      expect(await codeOf(fs.remove(forged))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.rename(forged, await at('in.txt')))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.rename(await at('a.txt'), fresh))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.createDirectory({ targetKey: FsTargetKey(`${outside}/d`), displayPath: 'd' }))).toBe('FS_SANDBOX_DENIED')
      expect(await raw.names(outside)).toEqual(['o.txt'])
      expect(await raw.names(root)).toEqual(['a.txt'])
    })

    it('a directory swapped for a link out of the root after resolve: remove, rename and createDirectory refuse', async () => {
      await put('d/f.txt', 'inside')
      await put('keep.txt', 'keep')
      await raw.writeInPlace(`${outside}/f.txt`, Buffer.from('outside'))
      const [f, d, moved, dirBelow] = await Promise.all([at('d/f.txt'), at('d'), at('d/moved.txt'), at('d/sub')])
      const keep = await at('keep.txt')
      await raw.rmrf(`${root}/d`)
      await raw.symlink(`${root}/d`, outside)
      expect(await codeOf(fs.remove(f))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.remove(d, { recursive: true }))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.rename(f, await at('in.txt')))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.rename(keep, moved))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.createDirectory(dirBelow))).toBe('FS_SANDBOX_DENIED')
      expect(await raw.names(outside)).toEqual(['f.txt'])
      expect(text(await raw.read(`${outside}/f.txt`))).toBe('outside')
      expect(await raw.names(root)).toEqual(['d', 'keep.txt'])
    })

    it('chrooted user: the jail root is fenced like any root', async () => {
      if (jailed === null) return
      const jail = new SftpFileSystem({ ...jailed, root: jailed.root })
      try {
        const top = await jail.resolve('.')
        expect(await codeOf(jail.remove(top, { recursive: true }))).toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(jail.remove({ targetKey: FsTargetKey('/etc/passwd'), displayPath: '/etc/passwd' }))).toBe('FS_SANDBOX_DENIED')
        const name = `jail-${Date.now()}.txt`
        await jail.writeText(await jail.resolve(name), 'j')
        expect(await codeOf(jail.rename(await jail.resolve(name), { targetKey: FsTargetKey(`/${name}`), displayPath: `/${name}` }))).toBe('FS_SANDBOX_DENIED')
        expect(await jail.remove(await jail.resolve(name))).toEqual({ type: 'file', entries: 1 })
      } finally {
        await jail.close()
      }
    })
  })

  describe('requests', () => {
    it('pinned request counts: remove of a file, of a directory, rename, createDirectory of an existing one', async () => {
      const counting = await countingClient(server!)
      const counted = new SftpFileSystem({ client: counting.client, root, sweepAbandoned: false })
      try {
        await put('a.txt', 'a')
        await put('d/x.txt', 'x')
        await raw.mkdirp(`${root}/e`)
        const [a, b, d, e] = await Promise.all([counted.resolve('a.txt'), counted.resolve('b.txt'), counted.resolve('d'), counted.resolve('e')])
        const measure = async (op: () => Promise<unknown>): Promise<Record<string, number>> => {
          counting.reset()
          await op()
          return Object.fromEntries(counting.counts)
        }
        // An existing directory: the realpath fence and a stat, one round trip.
        expect(await measure(() => counted.createDirectory(e))).toEqual({ REALPATH: 1, STAT: 1 })
        // Each end's lock first (leases.ts; the two keys in sorted order): a stage MKDIR and a temp file OPENed in
        // it, with their probes; then its record WRITE, its hardlink to the lock entry's name, an LSTAT of the
        // entry, the temp's REMOVE and the stage's RMDIR. Then: the looks at both ends (lstat + realpath fence) and the MKDIR of a
        // stage with its probes; the hash of the source for the outcome's version (an unsettled file is read: open,
        // fstat, reads, bracketed by probes), mkdir -p's look at the destination's directory, and the plain RENAME
        // (never posix-rename without overwrite) through the stage, probed, and the stage's RMDIR; the locks'
        // entries REMOVEd (their handles CLOSEd).
        expect(await measure(() => counted.rename(a, b))).toEqual({
          REALPATH: 38,
          OPEN: 3,
          WRITE: 2,
          'hardlink@openssh.com': 2,
          REMOVE: 4,
          MKDIR: 3,
          LSTAT: 19,
          FSTAT: 1,
          STAT: 7,
          READ: 2,
          CLOSE: 3,
          RENAME: 1,
          RMDIR: 3,
        })
        // The lock (2 round trips: its stage and temp file, then record + link), then look + stage, REMOVE through the stage (probed) and the stage's RMDIR, then the lock's REMOVE.
        const lock = { OPEN: 1, WRITE: 1, 'hardlink@openssh.com': 1, CLOSE: 1 }
        expect(await measure(() => counted.remove(b))).toEqual({ ...lock, REALPATH: 16, LSTAT: 11, MKDIR: 2, REMOVE: 3, RMDIR: 2 })
        expect(await measure(() => counted.remove(e))).toEqual({ ...lock, REALPATH: 16, LSTAT: 11, MKDIR: 2, REMOVE: 2, RMDIR: 3 })
        // OpenSSH's RMDIR of a non-empty directory is a generic failure: a READDIR tells FS_NOT_EMPTY (it stops at the first name that is not reserved).
        expect(await measure(() => counted.remove(d).catch(() => undefined))).toEqual({
          ...lock,
          REALPATH: 16,
          LSTAT: 11,
          MKDIR: 2,
          REMOVE: 2,
          RMDIR: 3,
          OPENDIR: 1,
          READDIR: 1,
          CLOSE: 2,
        })
        // The checked listing (two opens) for the count, a stage in the directory too, the unlink, both RMDIRs of stages and the directory's.
        expect(await measure(() => counted.remove(d, { recursive: true }))).toEqual({
          ...lock,
          REALPATH: 52,
          LSTAT: 17,
          MKDIR: 3,
          STAT: 12,
          OPENDIR: 2,
          READDIR: 8,
          CLOSE: 3,
          REMOVE: 3,
          RMDIR: 4,
        })
        // Nothing is left behind: no stage, no temp name, no lock entry.
        expect(await raw.names(root)).toEqual([])
      } finally {
        await counted.close()
        counting.client.end()
      }
    })
  })
})
