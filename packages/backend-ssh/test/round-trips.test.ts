/**
 * Round trips and requests per operation, as a tool call makes it (resolve, then the operation),
 * pinned so that a regression fails here. Round trips are the bursts of requests sent
 * together and waited for (see `countingClient`); at a real network's latency they are the wall
 * time. Also: the root is pinned at first use, so a root swapped for a link later leads nowhere.
 */
import { beforeEach, describe, expect, inject, it } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { createFileToolsByName, ObservationPolicy, type ToolResult } from '@seamfs/tools'
import { countingClient, titled, type CountingClient } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')
const KIB4 = 'x'.repeat(4095) + '\n'

describe.skipIf(server === null)(titled('SftpFileSystem: round trips per operation', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let counting: CountingClient
  let fs: SftpFileSystem

  suiteScratch(server, 'rt-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    counting = await countingClient(server)
    // The background sweep (one listing per directory per 30 s, after a write) would blur the counts.
    fs = new SftpFileSystem({ client: counting.client, root, sweepAbandoned: false })
    await fs.connect()
    return async () => {
      await fs.close()
      counting.client.end()
    }
  })

  /** Round trips and requests of `op` run after a fresh `resolve(path)`, which is measured on its own. */
  const measure = async (path: string, op: (t: Awaited<ReturnType<SftpFileSystem['resolve']>>) => Promise<unknown>) => {
    let target: Awaited<ReturnType<SftpFileSystem['resolve']>> | undefined
    const resolve = await counting.roundTrips(async () => (target = await fs.resolve(path)))
    const rts = await counting.roundTrips(() => op(target!))
    return { resolve, rts, requests: counting.total(), counts: Object.fromEntries(counting.counts) }
  }

  it('resolve: 1; read of 4 KiB: 2 (OPEN with the stat; then READs, FSTAT and CLOSE together)', async () => {
    await raw.writeInPlace(`${root}/a.txt`, Buffer.from(KIB4))
    const m = await measure('a.txt', async (t) => expect(await fs.readText(t)).toBe(KIB4))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 2, 23])
    expect(m.counts).toMatchObject({ OPEN: 1, READ: 2, FSTAT: 1, CLOSE: 1 })
  })

  it('read of a path not seen just before: the OPEN waits for the stat (3)', async () => {
    await raw.writeInPlace(`${root}/b.txt`, Buffer.from(KIB4))
    const t = await fs.resolve('b.txt')
    // Seen by resolve before the file existed? No: a fresh filesystem without the hint.
    const cold = new SftpFileSystem({ client: counting.client, root, sweepAbandoned: false })
    await cold.connect()
    const rts = await counting.roundTrips(async () => expect(await cold.readText(t)).toBe(KIB4))
    expect(rts).toBe(3)
  })

  it('read of 10 MiB: pipelined reads, whole and right', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x62)
    await raw.writeInPlace(`${root}/big.txt`, big)
    const m = await measure('big.txt', async (t) => expect((await fs.readText(t)).length).toBe(big.length))
    // 160 reads of 64 KiB with 32 in flight, one to find the end.
    expect(m.counts.READ).toBe(161)
    expect(m.rts).toBeLessThanOrEqual(9)
  })

  it('stat: 1 for a directory; 2 for a file whose hash is not settled (it is read: the version is a content hash)', async () => {
    await raw.writeInPlace(`${root}/d/s.txt`, Buffer.from(KIB4))
    expect((await measure('d', (t) => fs.stat(t))).rts).toBe(1)
    const m = await measure('d/s.txt', (t) => fs.stat(t))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 2, 23])
  })

  it('write of a new file: 3 (the lock entry with the stage and temp; its link with the content and a stat of the target behind it; rename with the lock released behind it)', async () => {
    const m = await measure('new.txt', (t) => fs.writeText(t, KIB4))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 3, 54])
    // The lock entry's stage, temp, record and link come on top of the write's own.
    expect(m.counts).toMatchObject({ MKDIR: 2, OPEN: 2, WRITE: 2, 'hardlink@openssh.com': 1, 'posix-rename@openssh.com': 1 })
    expect((await raw.read(`${root}/new.txt`)).toString()).toBe(KIB4)
  })

  it('overwrite of a file changed moments ago, the previous content returned (before): 4 (its OPEN behind the link of the lock entry, then its READs)', async () => {
    await raw.writeInPlace(`${root}/o.txt`, Buffer.from('old\n'))
    const m = await measure('o.txt', async (t) => expect((await fs.writeText(t, KIB4)).before).toBe('old\n'))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 4, 75])
  })

  it('overwrite without the previous content (beforeMaxBytes 0): the old file is not opened', async () => {
    await raw.writeInPlace(`${root}/n.txt`, Buffer.from('old\n'))
    const blind = new SftpFileSystem({ client: counting.client, root, diffBasisMaxBytes: 0, sweepAbandoned: false })
    const t = await blind.resolve('n.txt')
    counting.reset()
    const rts = await counting.roundTrips(async () => expect((await blind.writeText(t, KIB4)).before).toBeNull())
    expect(rts).toBe(3)
    // Two OPENs: the temp file's and the lock entry's (never the old file).
    expect(counting.counts.get('OPEN')).toBe(2)
    expect(counting.counts.get('READ')).toBeUndefined()
  })

  it('overwrite under replaceIfVersion, before wanted: 4 (the lock taken while the write stages; the file read under it; its release behind the rename)', async () => {
    await raw.writeInPlace(`${root}/g.txt`, Buffer.from('old\n'))
    const { version } = (await fs.stat(await fs.resolve('g.txt')))!
    const m = await measure('g.txt', async (t) =>
      expect((await fs.writeText(t, KIB4, { expected: { kind: 'replaceIfVersion', version } })).before).toBe('old\n'),
    )
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 4, 75])
    expect(m.counts).toMatchObject({ 'hardlink@openssh.com': 1, REMOVE: 2, WRITE: 2 })
    const stale = await measure('g.txt', (t) => codeOf(fs.writeText(t, 'late', { expected: { kind: 'replaceIfVersion', version } })))
    expect(stale.counts['posix-rename@openssh.com']).toBeUndefined()
    expect((await raw.read(`${root}/g.txt`)).toString()).toBe(KIB4)
    // The lock entry went with the commit, the stale write's with its failure.
    expect(await raw.names(root)).toEqual(['g.txt'])
  })

  it('createIfAbsent of a new file: 3; on an existing one FS_NOT_OBSERVED and nothing left', async () => {
    const m = await measure('c.txt', (t) => fs.writeText(t, KIB4, { expected: { kind: 'createIfAbsent' } }))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 3, 37])
    expect(m.counts).toMatchObject({ 'hardlink@openssh.com': 1, REMOVE: 1, RMDIR: 1 })
    const again = await measure('c.txt', (t) => codeOf(fs.writeText(t, 'x', { expected: { kind: 'createIfAbsent' } })))
    expect(again.counts['hardlink@openssh.com']).toBeUndefined()
    expect(await raw.names(root)).toEqual(['c.txt'])
  })

  it('edit of a file changed moments ago: 5 (the lock with the stage; the OPEN behind its link; the READs; write + fsync; rename with the lock released behind it)', async () => {
    await raw.writeInPlace(`${root}/e.txt`, Buffer.from(`MARK\n${KIB4}`))
    const m = await measure('e.txt', (t) => fs.editText(t, { oldString: 'MARK', newString: 'DONE', replaceAll: false }))
    expect([m.resolve, m.rts, m.requests]).toEqual([1, 5, 75])
    expect(await raw.names(root)).toEqual(['e.txt'])
    expect((await raw.read(`${root}/e.txt`)).toString()).toBe(`DONE\n${KIB4}`)
  })

  it('overwrite and edit of a file whose hash is settled: 3 and 4 (its read goes with the lock; the hash vouches for it under the lock)', async () => {
    await raw.writeInPlace(`${root}/s.txt`, Buffer.from('settled\n'))
    await raw.writeInPlace(`${root}/t.txt`, Buffer.from(`MARK\n${KIB4}`))
    // A write of this client's shows it the server's clock; a hash read 2 s past a file's mtime is settled.
    await fs.writeText(await fs.resolve('clock.txt'), 'tick')
    await new Promise((resolve) => setTimeout(resolve, 2_200))
    const s = await fs.resolve('s.txt')
    const { version } = await fs.openFile(s).then(async (file) => (await file.close(), file.info))
    const m = await measure('s.txt', async (t) =>
      expect((await fs.writeText(t, KIB4, { expected: { kind: 'replaceIfVersion', version } })).before).toBe('settled\n'),
    )
    expect([m.resolve, m.rts]).toEqual([1, 3])
    expect((await raw.read(`${root}/s.txt`)).toString()).toBe(KIB4)
    await fs.readText(await fs.resolve('t.txt'))
    const e = await measure('t.txt', (t) => fs.editText(t, { oldString: 'MARK', newString: 'DONE', replaceAll: false }))
    expect([e.resolve, e.rts]).toEqual([1, 4])
    expect((await raw.read(`${root}/t.txt`)).toString()).toBe(`DONE\n${KIB4}`)
    expect(await raw.names(root)).toEqual(['clock.txt', 's.txt', 't.txt'])
  })

  // A path the tools resolved lately is remembered by the fence (resolveMemoryMs): read again 2, an
  // overwrite or an edit after a read pay no resolve; a new file's path is resolved (1 round trip).
  it('through the tools (sandbox, read-before-write policy): read again 2, write of a new file 4, overwrite after read 4 (3 once its hash is settled), edit after read 5 (4)', async () => {
    await raw.writeInPlace(`${root}/r.txt`, Buffer.from(KIB4))
    await raw.writeInPlace(`${root}/o.txt`, Buffer.from(KIB4))
    await raw.writeInPlace(`${root}/e.txt`, Buffer.from(`MARK-A\n${KIB4}`))
    const tools = createFileToolsByName({ fs, policy: new ObservationPolicy() })
    const ok = async <V>(call: Promise<ToolResult<V>>): Promise<V> => {
      const r = await call
      if (r.isError || r.value === undefined) throw new Error(r.text)
      return r.value
    }
    const calls = async (settled: boolean): Promise<number[]> => {
      const read = await counting.roundTrips(async () => expect((await ok(tools.read.execute({ file_path: 'r.txt' }))).totalLines).toBe(1))
      const write = await counting.roundTrips(() => ok(tools.write.execute({ file_path: `new-${String(settled)}.txt`, content: KIB4 })))
      await ok(tools.read.execute({ file_path: 'o.txt' }))
      const over = await counting.roundTrips(() => ok(tools.write.execute({ file_path: 'o.txt', content: settled ? KIB4 : 'changed\n' })))
      await ok(tools.read.execute({ file_path: 'e.txt' }))
      const [from, to] = settled ? ['MARK-B', 'MARK-A'] : ['MARK-A', 'MARK-B']
      const edit = await counting.roundTrips(() => ok(tools.edit.execute({ file_path: 'e.txt', old_string: from, new_string: to })))
      return [read, write, over, edit]
    }
    // The fence pins its root on its first call.
    await ok(tools.read.execute({ file_path: 'r.txt' }))
    expect(await calls(false)).toEqual([2, 4, 4, 5])
    // Once the files' mtimes lie 2 s behind the server's clock, their hashes are settled.
    await new Promise((resolve) => setTimeout(resolve, 2_200))
    expect(await calls(true)).toEqual([2, 4, 3, 4])
  })

  it('write into a missing directory: the directory is made, checked, and the write goes on', async () => {
    const m = await measure('n/e/w.txt', (t) => fs.writeText(t, 'deep'))
    expect((await raw.read(`${root}/n/e/w.txt`)).toString()).toBe('deep')
    // Three levels, the write's stage, and the lock's stage tried first (its directory missing, no lock is needed).
    expect(m.counts.MKDIR).toBe(5)
  })

  it('list: 1 + a window of READDIRs per round trip (100 entries: 2; 1,000: 3)', async () => {
    await Promise.all(Array.from({ length: 100 }, (_, i) => raw.writeInPlace(`${root}/l100/f${i}.txt`, Buffer.from('x'))))
    const m = await measure('l100', async (t) => expect(await fs.listDir(t)).toHaveLength(100))
    expect([m.resolve, m.rts]).toEqual([1, 2])
    expect(m.counts).toMatchObject({ OPENDIR: 2, READDIR: 8, CLOSE: 2 })
    for (let i = 0; i < 1000; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => raw.writeInPlace(`${root}/l1000/f${i + j}.txt`, Buffer.from('x'))))
    }
    const k = await measure('l1000', async (t) => expect(await fs.listDir(t)).toHaveLength(1000))
    expect(k.rts).toBe(3)
  })

  it('the root is pinned at first use: swapped for a link later, it leads nowhere outside', async () => {
    const outside = await raw.freshDir(base, 'outside-')
    await raw.writeInPlace(`${outside}/secret.txt`, Buffer.from('secret'))
    await raw.writeInPlace(`${root}/secret.txt`, Buffer.from('inside'))
    const t = await fs.resolve('secret.txt')
    const top = await fs.resolve('.')
    expect(await fs.readText(t)).toBe('inside')
    // The root directory itself is moved away and replaced by a link to the outside directory.
    await raw.call((cb) => raw.sftp.rename(root, `${root}-moved`, cb))
    await raw.symlink(root, outside)
    try {
      expect(await codeOf(fs.readText(t))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.resolve('secret.txt'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.writeText(t, 'leak'))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.listDir(top))).toBe('FS_SANDBOX_DENIED')
      expect(await codeOf(fs.stat(t))).toBe('FS_SANDBOX_DENIED')
      expect((await raw.read(`${outside}/secret.txt`)).toString()).toBe('secret')
      expect(await raw.names(outside)).toEqual(['secret.txt'])
    } finally {
      await raw.unlink(root)
      await raw.call((cb) => raw.sftp.rename(`${root}-moved`, root, cb))
    }
  })
})
