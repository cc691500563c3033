import { beforeEach, describe, expect, inject, it } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { FsTargetKey } from '@seamfs/core/backend'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import ssh2 from 'ssh2'
import { Session, sha256Fingerprint } from '../src/connection.js'
import { countingClient, titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')
const { utils } = ssh2
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(server === null)(titled('SftpFileSystem against OpenSSH', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let outside: string
  let fs: SftpFileSystem

  suiteScratch(server, 'ssh-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    // A sibling the test user can write: only the root fence keeps seamfs out of it.
    outside = await raw.freshDir(base, 'outside-')
    fs = new SftpFileSystem({ ...server, root })
    return async () => fs.close()
  })

  describe('root scoping: nothing escapes', () => {
    it('paths that leave the root lexically are FS_SANDBOX_DENIED', async () => {
      expect(await codeOf(fs.resolve('..'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.resolve('../x.txt'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.resolve('/etc/passwd'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.resolve('a.txt', { cwd: '..' }))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.lstat('../'))).toBe('FS_SANDBOX_DENIED')
      expect((await fs.resolve(`${root}/a/../b.txt`)).targetKey).toBe(`${root}/b.txt`)
    })

    it('a symlink that points out of the root is refused for resolve, lstat below it, read and write', async () => {
      await raw.writeInPlace(`${outside}/secret.txt`, Buffer.from('secret'))
      await raw.symlink(`${root}/out`, outside)
      await raw.symlink(`${root}/file-out`, `${outside}/secret.txt`)
      await raw.symlink(`${root}/dangling-out`, `${outside}/new.txt`)
      for (const path of ['out', 'out/secret.txt', 'file-out', 'dangling-out', 'out/new/deep.txt']) {
        expect(await codeOf(fs.resolve(path))).toBe('FS_SANDBOX_DENIED')
      }
      expect(await codeOf(fs.lstat('out/secret.txt'))).toBe('FS_SANDBOX_DENIED')
      expect((await fs.lstat('out'))?.type).toBe('symlink')
      expect(await raw.names(outside)).toEqual(['secret.txt'])
    })

    it('a listing shows links out of the root as other, and their targets cannot be used', async () => {
      await raw.symlink(`${root}/out`, outside)
      await raw.writeInPlace(`${root}/in.txt`, Buffer.from('in'))
      await raw.symlink(`${root}/in-link`, 'in.txt')
      const entries = await fs.listDir(await fs.resolve('.'))
      expect(entries.map((e) => [e.name, e.type])).toEqual([
        ['in-link', 'file'],
        ['in.txt', 'file'],
        ['out', 'other'],
      ])
      const out = entries.find((e) => e.name === 'out')!
      expect(await codeOf(fs.listDir(out.target))).toBe('FS_SANDBOX_DENIED')
      expect(entries[0]?.target.targetKey).toBe(`${root}/in.txt`)
    })

    it('a directory swapped for a link out of the root after resolve is refused (the fence re-checks)', async () => {
      await raw.writeInPlace(`${root}/d/f.txt`, Buffer.from('inside'))
      await raw.writeInPlace(`${outside}/f.txt`, Buffer.from('outside'))
      const target = await fs.resolve('d/f.txt')
      const fresh = await fs.resolve('d/new.txt')
      await raw.rmrf(`${root}/d`)
      await raw.symlink(`${root}/d`, outside)
      expect(await codeOf(fs.readText(target))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.stat(target))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.writeText(target, 'pwned'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.writeText(fresh, 'pwned', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.editText(target, { oldString: 'outside', newString: 'pwned', replaceAll: false }))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.listDir(await fs.resolve('.').then(() => ({ targetKey: FsTargetKey(`${root}/d`), displayPath: 'd' }))))).toBe('FS_SANDBOX_DENIED')
      expect((await raw.read(`${outside}/f.txt`)).toString()).toBe('outside')
      expect(await raw.names(outside)).toEqual(['f.txt'])
    })

    it('a forged target outside the root is refused', async () => {
      const forged = { targetKey: FsTargetKey(`${outside}/x.txt`), displayPath: 'x.txt' }
      expect(await codeOf(fs.readText(forged))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.writeText(forged, 'x'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.writeText({ targetKey: FsTargetKey(`${root}/../x`), displayPath: 'x' }, 'x'))).toBe('FS_SANDBOX_DENIED')
      expect(await raw.names(outside)).toEqual([])
    })
  })

  describe('modes and permissions', () => {
    it('a replaced or edited file keeps its mode; a new file gets newFileMode', async () => {
      await raw.writeInPlace(`${root}/m.txt`, Buffer.from('one'))
      await raw.chmod(`${root}/m.txt`, 0o640)
      const t = await fs.resolve('m.txt')
      await fs.writeText(t, 'two')
      expect(await raw.mode(`${root}/m.txt`)).toBe(0o640)
      await fs.editText(t, { oldString: 'two', newString: 'three', replaceAll: false })
      expect(await raw.mode(`${root}/m.txt`)).toBe(0o640)
      await fs.writeText(await fs.resolve('new.txt'), 'x')
      expect(await raw.mode(`${root}/new.txt`)).toBe(0o600)
      const open = new SftpFileSystem({ ...server!, root, newFileMode: 0o644 })
      await open.writeText(await open.resolve('shared.txt'), 'x', { expected: { kind: 'createIfAbsent' } })
      await open.close()
      expect(await raw.mode(`${root}/shared.txt`)).toBe(0o644)
    })

    it('a directory the user may not write is FS_PERMISSION_DENIED, with no residue', async () => {
      await raw.writeInPlace(`${root}/ro/keep.txt`, Buffer.from('keep'))
      await raw.chmod(`${root}/ro`, 0o555)
      try {
        expect(await codeOf(fs.writeText(await fs.resolve('ro/keep.txt'), 'x'))).toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(fs.writeText(await fs.resolve('ro/new.txt'), 'x'))).toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(fs.writeText(await fs.resolve('ro/sub/new.txt'), 'x'))).toBe('FS_PERMISSION_DENIED')
        expect(await raw.names(`${root}/ro`)).toEqual(['keep.txt'])
      } finally {
        await raw.chmod(`${root}/ro`, 0o755)
      }
    })

    it('an unreadable file still has a stat (metadata version); reading it is FS_PERMISSION_DENIED', async () => {
      await raw.writeInPlace(`${root}/secret.txt`, Buffer.from('s'))
      await raw.chmod(`${root}/secret.txt`, 0o000)
      const t = await fs.resolve('secret.txt')
      expect((await fs.stat(t))?.type).toBe('file')
      expect(await codeOf(fs.readText(t))).toBe('FS_PERMISSION_DENIED')
    })
  })

  describe('size limits', () => {
    it('maxTextBytes 1000: a 1001-byte file is FS_TOO_LARGE for readText and editText, refused on its stat, unchanged', async () => {
      const bytes = Buffer.from(`MARK\n${'x'.repeat(996)}`)
      expect(bytes.length).toBe(1001)
      await raw.writeInPlace(`${root}/big.txt`, bytes)
      await raw.writeInPlace(`${root}/fits.txt`, bytes.subarray(1))
      const counting = await countingClient(server!)
      // No background sweep: its listing (and the lock entries it may read) would blur the counts.
      const limited = new SftpFileSystem({ client: counting.client, root, maxTextBytes: 1000, sweepAbandoned: false })
      try {
        const t = await limited.resolve('big.txt')
        const { version } = (await limited.stat(t))!
        counting.reset()
        expect(await codeOf(limited.readText(t))).toBe('FS_TOO_LARGE')
        // The size comes with the stat of the fence's round trip; the OPEN sent with it (the file was
        // just seen as a regular file) is closed unread: no READ.
        expect(Object.fromEntries(counting.counts)).toEqual({ REALPATH: 3, STAT: 1, OPEN: 1, CLOSE: 1 })
        const edit = { oldString: 'MARK', newString: 'DONE', replaceAll: false }
        counting.reset()
        expect(await codeOf(limited.editText(t, edit))).toBe('FS_TOO_LARGE')
        expect(await codeOf(limited.editText(t, edit, { expected: { version } }))).toBe('FS_TOO_LARGE')
        // The stage (made with the stat, in the same round trip) is dropped: nothing read, nothing written
        // but the records of the edits' lock entries (one each), removed again.
        expect(counting.counts.get('READ')).toBeUndefined()
        expect(counting.counts.get('WRITE')).toBe(2)
        expect((await raw.read(`${root}/big.txt`)).equals(bytes)).toBe(true)
        expect(await raw.names(root)).toEqual(['big.txt', 'fits.txt'])
        const fits = await limited.resolve('fits.txt')
        expect(await limited.readText(fits)).toBe(bytes.subarray(1).toString())
        expect((await limited.editText(fits, { oldString: 'x', newString: 'y', replaceAll: true })).after).toBe(`ARK\n${'y'.repeat(996)}`)
      } finally {
        await limited.close()
        counting.client.end()
      }
    })

    it('a 2.5 GiB sparse file under the default limit: readText and editText are FS_TOO_LARGE, nothing is read or changed', async () => {
      const size = 2.5 * 1024 ** 3
      const handle = await raw.call<Buffer>((cb) => raw.sftp.open(`${root}/huge.txt`, 'w', cb))
      await raw.call((cb) => raw.sftp.write(handle, Buffer.from('Z'), 0, 1, size - 1, cb))
      await raw.call((cb) => raw.sftp.close(handle, cb))
      const t = await fs.resolve('huge.txt')
      expect(await codeOf(fs.readText(t))).toBe('FS_TOO_LARGE')
      expect(await codeOf(fs.editText(t, { oldString: 'Z', newString: 'Y', replaceAll: false }))).toBe('FS_TOO_LARGE')
      const again = await raw.call<Buffer>((cb) => raw.sftp.open(`${root}/huge.txt`, 'r', cb))
      const last = Buffer.alloc(2)
      const n = await raw.call<number>((cb) => raw.sftp.read(again, last, 0, 2, size - 1, cb))
      await raw.call((cb) => raw.sftp.close(again, cb))
      expect(last.subarray(0, n).toString()).toBe('Z')
      expect(await raw.names(root)).toEqual(['huge.txt'])
    })

    it('a file that grew since its stat is read no further than the limit', async () => {
      await raw.writeInPlace(`${root}/grown.txt`, Buffer.alloc(300 * 1024, 0x61))
      const session = new Session(raw.sftp, 1)
      const handle = await raw.call<Buffer>((cb) => raw.sftp.open(`${root}/grown.txt`, 'r', cb))
      try {
        // A stale size hint of 10 bytes, as if the file grew after the stat.
        expect((await session.readAll(handle, { sizeHint: 10, verb: 'read', limit: 1001 })).length).toBe(1001)
        expect((await session.readAll(handle, { sizeHint: 10, verb: 'read', limit: 200 * 1024 + 1 })).length).toBe(200 * 1024 + 1)
        expect((await session.readAll(handle, { sizeHint: 10, verb: 'read' })).length).toBe(300 * 1024)
        expect((await session.readAll(handle, { sizeHint: 400 * 1024, verb: 'read', limit: 1001 })).length).toBe(1001)
      } finally {
        await raw.call((cb) => raw.sftp.close(handle, cb))
      }
    })
  })

  describe('versions: content hash, and the settled-hash cache', () => {
    it('a stat of a settled, unchanged file sends no OPEN; a later external write is still seen', async () => {
      const counting = await countingClient(server!)
      const cached = new SftpFileSystem({ ...server!, root, client: counting.client })
      try {
        const t = await cached.resolve('c.txt')
        const { version } = await cached.writeText(t, 'aaaa')
        expect((await cached.stat(t))?.version).toBe(version)
        await sleep(2100)
        expect((await cached.stat(t))?.version).toBe(version) // hashed once more, now settled
        counting.reset()
        expect((await cached.stat(t))?.version).toBe(version)
        expect(counting.counts.get('OPEN')).toBeUndefined()
        await raw.writeInPlace(`${root}/c.txt`, Buffer.from('bbbb'))
        expect((await cached.stat(t))?.version).not.toBe(version)
      } finally {
        await cached.close()
        counting.client.end()
      }
    })

    it('a writer that restores the mtime and keeps the size: seen with hashCache false (the cache is the known deviation)', async () => {
      await raw.writeInPlace(`${root}/r.txt`, Buffer.from('1111'))
      const old = new Date(Date.now() - 3_600_000)
      await raw.call((cb) => raw.sftp.utimes(`${root}/r.txt`, old, old, cb))
      const strict = new SftpFileSystem({ ...server!, root, hashCache: false })
      try {
        await fs.writeText(await fs.resolve('clock.txt'), 'tells the cache the server time')
        const t = await fs.resolve('r.txt')
        const before = (await fs.stat(t))?.version
        const strictBefore = (await strict.stat(await strict.resolve('r.txt')))?.version
        await raw.writeInPlace(`${root}/r.txt`, Buffer.from('2222'))
        await raw.call((cb) => raw.sftp.utimes(`${root}/r.txt`, old, old, cb))
        expect((await strict.stat(await strict.resolve('r.txt')))?.version).not.toBe(strictBefore)
        expect((await fs.stat(t))?.version).toBe(before)
      } finally {
        await strict.close()
      }
    })
  })

  describe('connection', () => {
    it('pins the host key: a wrong fingerprint is refused, the right one connects', async () => {
      const wrong = new SftpFileSystem({ ...server!, root, hostKeySha256: sha256Fingerprint(Buffer.from('not the key')) })
      // Not FS_PERMISSION_DENIED: the client refused, not the server; and retrying meets the same key.
      expect(await wrong.connect().catch((e: unknown) => e)).toMatchObject({ code: 'FS_IO_ERROR', retryable: false })
      await wrong.close()
      const right = new SftpFileSystem({ ...server!, root, hostKeySha256: server!.hostKeySha256 })
      await right.connect()
      await right.close()
    })

    it('a wrong key is FS_PERMISSION_DENIED; an unreachable port is a retryable FS_IO_ERROR', async () => {
      const stranger = new SftpFileSystem({ ...server!, root, privateKey: utils.generateKeyPairSync('ed25519').private })
      expect(await codeOf(stranger.connect())).toBe('FS_PERMISSION_DENIED')
      await stranger.close()
      const nowhere = new SftpFileSystem({ ...server!, root, port: 1 })
      const err = await nowhere.connect().catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'FS_IO_ERROR', retryable: true })
      await nowhere.close()
      const garbled = new SftpFileSystem({ ...server!, root, privateKey: 'not a key' })
      expect(await garbled.connect().catch((e: unknown) => e)).toMatchObject({ code: 'FS_IO_ERROR', retryable: false })
      await garbled.close()
    })

    it('an injected client is used and left open by close(); a missing root is FS_NOT_FOUND', async () => {
      const counting = await countingClient(server!)
      const injected = new SftpFileSystem({ client: counting.client, root })
      await injected.writeText(await injected.resolve('i.txt'), 'via injected')
      await injected.close()
      expect(counting.counts.get('posix-rename@openssh.com')).toBe(1)
      const again = new SftpFileSystem({ client: counting.client, root: `${root}/missing` })
      expect(await codeOf(again.connect())).toBe('FS_NOT_FOUND')
      await again.close()
      counting.client.end()
      expect((await raw.read(`${root}/i.txt`)).toString()).toBe('via injected')
    })

    // stat and lstat report an absent path as undefined: a root that is not there must not look like one.
    it('a missing root is an error for stat and lstat, never an absent file', async () => {
      const target = await fs.resolve('a.txt')
      const missing = new SftpFileSystem({ ...server!, root: `${root}/missing` })
      expect(await codeOf(missing.lstat('a.txt'))).toBe('FS_IO_ERROR')
      expect(await codeOf(missing.stat(target))).toBe('FS_IO_ERROR')
      expect(await codeOf(missing.connect())).toBe('FS_NOT_FOUND')
      await missing.close()
    })

    it('close() is idempotent; calls after it are FS_IO_ERROR', async () => {
      const t = await fs.resolve('x.txt')
      await fs.close()
      await fs.close()
      expect(await codeOf(fs.readText(t))).toBe('FS_IO_ERROR')
    })

    it('processPath is FS_UNSUPPORTED; remotePath and fileUrl name the file on the server', async () => {
      const t = await fs.resolve('a b.txt')
      expect(await codeOf(async () => fs.processPath(t))).toBe('FS_UNSUPPORTED')
      expect(fs.remotePath(t)).toBe(`${root}/a b.txt`)
      expect(fs.fileUrl(t)).toBe(`sftp://${server!.username}@127.0.0.1:${server!.port}${root}/a%20b.txt`)
    })
  })
})
