/**
 * Lock objects (`leases.ts`) as other processes, careless or hostile, may leave them: a body that
 * is no lease record (garbage, empty), a record of another host with a short or an absurd lease,
 * a record of a dead process on this host. None blocks for longer than its lease; a wait that
 * runs out is a retryable FS_IO_ERROR naming the holder, and changes nothing. Lock objects are
 * seen by no listing, and a path that looks like one is an ordinary file.
 */
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { DEFAULT_LEASE_MS, formatLeaseRecord, HOST_ID, parseLeaseRecord } from '@seamfs/core/backend'
import { isFsError, type FsError } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3LeaseStore } from '../src/leases.js'
import { Store } from '../src/store.js'
import { lockObjectKey } from './agents.js'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const record = (host: string, pid: number, leaseMs: number): string => formatLeaseRecord({ host, pid, nonce: 'ab'.repeat(12), leaseMs })

describe.skipIf(server === null)(`S3FileSystem lock objects${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  const bucket = server?.bucket ?? ''
  const prefixes: string[] = []
  const planted: string[] = []
  let client: S3Client

  beforeAll(() => {
    client = rawClient(server!)
  })
  afterAll(async () => {
    for (const key of planted) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
    for (const p of prefixes) await purge(client, bucket, p)
    client?.destroy()
  })

  async function open(options: Partial<S3FileSystemOptions> = {}, prefix = freshPrefix('locks')): Promise<S3FileSystem> {
    if (!prefixes.includes(prefix)) prefixes.push(prefix)
    return S3FileSystem.open({ client, bucket, prefix, ...options })
  }
  /**
   * Puts `body` as the lock object of `path` in `fs`, behind the backend's back, once `fs` is quiet: a
   * write answers before it releases its own lock object, whose DELETE would take the planted one.
   */
  const plant = async (fs: S3FileSystem, path: string, body: string): Promise<void> => {
    await fs.settle()
    const key = lockObjectKey(`${fs.prefix}${path}`)
    planted.push(key)
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: Buffer.byteLength(body) }))
  }
  const lockExists = (fs: S3FileSystem, path: string): Promise<boolean> =>
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: lockObjectKey(`${fs.prefix}${path}`) })).then(
      () => true,
      () => false,
    )
  const timed = async (operation: Promise<unknown>): Promise<{ ms: number; error: FsError | 'ok' }> => {
    const started = Date.now()
    const error = await operation.then(
      () => 'ok' as const,
      (err: unknown) => {
        if (isFsError(err)) return err
        throw err
      },
    )
    return { ms: Date.now() - started, error }
  }

  it('lockLeaseMs and lockWaitMs are checked', () => {
    expect(() => new S3FileSystem({ bucket, lockLeaseMs: 500 })).toThrow(RangeError)
    expect(() => new S3FileSystem({ bucket, lockLeaseMs: 10 ** 9 })).toThrow(RangeError)
    expect(() => new S3FileSystem({ bucket, lockWaitMs: -1 })).toThrow(RangeError)
  })

  it('garbage and empty lock objects: a short wait fails retryably naming them; they are taken over once the lease has passed', async () => {
    const fs = await open({ lockWaitMs: 1_000 })
    const [g, e] = [await fs.resolve('g.txt'), await fs.resolve('e.txt')]
    await fs.writeText(g, 'g')
    await fs.writeText(e, 'e')
    const planted = Date.now()
    await plant(fs, 'g.txt', 'garbage \u0000\u00ff not a lease record')
    await plant(fs, 'e.txt', '')
    const [busyG, busyE] = await Promise.all([timed(fs.remove(g)), timed(fs.writeText(e, 'x'))])
    for (const [busy, what] of [
      [busyG, 'not a lock record ("garbage'],
      [busyE, 'not a lock record ("")'],
    ] as const) {
      expect(busy.error === 'ok' ? 'ok' : [busy.error.code, busy.error.retryable]).toEqual(['FS_IO_ERROR', true])
      expect(busy.error === 'ok' ? '' : busy.error.message).toContain(what)
      expect(busy.ms, 'nothing waits beyond lockWaitMs').toBeLessThan(4_000)
    }
    expect([await fs.readText(g), await fs.readText(e)], 'a failed wait changes nothing').toEqual(['g', 'e'])
    // An entry that is no record is judged by its age (core's default lease, by the server's clock).
    const patient = await open({ lockWaitMs: 30_000 }, fs.prefix)
    const [removed, written] = await Promise.all([timed(patient.remove(g)), timed(patient.writeText(e, 'x'))])
    expect([removed.error, written.error]).toEqual(['ok', 'ok'])
    const waited = Date.now() - planted
    expect(waited).toBeGreaterThanOrEqual(DEFAULT_LEASE_MS - 1_000)
    expect(waited).toBeLessThan(DEFAULT_LEASE_MS + 5_000)
    expect([await patient.stat(g), await patient.readText(e)]).toEqual([undefined, 'x'])
    expect([await lockExists(fs, 'g.txt'), await lockExists(fs, 'e.txt')], 'released after the takeover').toEqual([false, false])
  }, 40_000)

  it("another host's record: taken over after its own short lease; an absurd lease is capped, and a wait for it fails naming the holder", async () => {
    const fs = await open({ lockWaitMs: 1_000 })
    const [s, a] = [await fs.resolve('short.txt'), await fs.resolve('absurd.txt')]
    await fs.writeText(s, 's')
    await fs.writeText(a, 'a')
    await plant(fs, 'short.txt', record('e15e3e4e0000', 4242, 2_000))
    await plant(fs, 'absurd.txt', record('e15e3e4e0000', 4343, 999_999_999))
    const planted = Date.now()
    const busy = await timed(fs.rename(a, await fs.resolve('absurd2.txt')))
    expect(busy.error === 'ok' ? 'ok' : [busy.error.code, busy.error.retryable, busy.error.message]).toEqual([
      'FS_IO_ERROR',
      true,
      expect.stringContaining('held by pid 4343 on host e15e3e4e0000'),
    ])
    expect(await fs.readText(a)).toBe('a')
    const patient = await open({ lockWaitMs: 10_000 }, fs.prefix)
    const moved = await timed(patient.rename(s, await patient.resolve('short2.txt')))
    expect(moved.error).toBe('ok')
    // Its 2 s lease, by the server's whole-second clock: never early, at most about 2 s late.
    const waited = Date.now() - planted
    expect(waited).toBeGreaterThanOrEqual(1_500)
    expect(waited).toBeLessThan(6_000)
    expect(await patient.readText(await patient.resolve('short2.txt'))).toBe('s')
  }, 30_000)

  it('a record of a dead process on this host is taken over at once, whatever its lease', async () => {
    const fs = await open({ lockWaitMs: 5_000 })
    const d = await fs.resolve('dead.txt')
    const { version } = await fs.writeText(d, 'd')
    // A pid that cannot be alive: above the kernel's pid_max (at most 2^22).
    await plant(fs, 'dead.txt', record(HOST_ID, 2 ** 22 + 17, 120_000))
    const removed = await timed(fs.remove(d, { expected: { version } }))
    expect(removed.error).toBe('ok')
    expect(removed.ms).toBeLessThan(2_000)
    expect(await lockExists(fs, 'dead.txt')).toBe(false)
  })

  it('the lease store: one create wins; a renewal changes the token, so a takeover of the old one fails; of two takeovers of one stale entry one wins', async () => {
    const key = `${freshPrefix('locks')}direct.txt`
    planted.push(lockObjectKey(key))
    const store = (leaseMs = 10_000): S3LeaseStore =>
      new S3LeaseStore(new Store(client, bucket, 1000), { leaseMs, ifMatch: (e) => e, deleteIfMatch: () => false })
    // `one` releases as a holder older than its lease (as after a freeze): HEAD first, DELETE only its own object.
    // (A holder younger than its lease DELETEs at once: nobody can have taken a lock over before its lease ran out.)
    const [one, two, three] = [store(1_000), store(), store()]
    const text = (nonce: string): string => formatLeaseRecord({ host: 'abcdef012345', pid: 1, nonce, leaseMs: 10_000 })
    const token = await one.create(key, text('a'.repeat(24)), undefined)
    expect(token).toMatch(/^[0-9a-f]{32}$/)
    expect(await two.create(key, text('b'.repeat(24)), undefined), 'held: no second create').toBeUndefined()
    const seen = await two.inspect(key, undefined)
    expect(seen).toMatchObject({ token, text: text('a'.repeat(24)) })
    expect(seen?.ageMs).toBeGreaterThanOrEqual(0)
    expect(seen?.ageMs).toBeLessThan(2_000)
    await one.renew(key, token ?? '')
    const renewed = await two.inspect(key, undefined)
    expect(renewed?.token, 'a renewal writes a new nonce: a new ETag').not.toBe(token)
    expect(parseLeaseRecord(renewed?.text ?? '')?.nonce).not.toBe('a'.repeat(24))
    // A waiter that judged the first token stale: its takeover (PUT If-Match of that token) changes nothing.
    await two.remove(key, token ?? '')
    expect((await three.inspect(key, undefined))?.token).toBe(renewed?.token)
    // Two waiters take over the renewed entry at once (as if it were stale): one free marker, one new holder.
    await Promise.all([two.remove(key, renewed?.token ?? ''), three.remove(key, renewed?.token ?? '')])
    expect(await one.inspect(key, undefined), 'a free marker is no holder').toBeUndefined()
    const takers = await Promise.all([two.create(key, text('c'.repeat(24)), undefined), three.create(key, text('d'.repeat(24)), undefined)])
    expect(takers.filter((t) => t !== undefined)).toHaveLength(1)
    // The first holder's release finds another's object: it leaves it.
    await one.remove(key, token ?? '')
    expect((await one.inspect(key, undefined))?.token).toBe(takers.find((t) => t !== undefined))
    const winner = takers[0] === undefined ? three : two
    await winner.remove(key, takers.find((t) => t !== undefined) ?? '')
    expect(await one.inspect(key, undefined), 'released').toBeUndefined()
  })

  it('an instance that was not opened probes before its first remove, and takes the lock object', async () => {
    const opened = await open()
    await opened.writeText(await opened.resolve('n.txt'), 'n')
    await plant(opened, 'n.txt', record('e15e3e4e0000', 7, 60_000))
    const fresh = new S3FileSystem({ client, bucket, prefix: opened.prefix, lockWaitMs: 500 })
    const busy = await timed(fresh.remove(await fresh.resolve('n.txt')))
    expect(busy.error === 'ok' ? 'ok' : busy.error.code).toBe('FS_IO_ERROR')
    expect(await opened.readText(await opened.resolve('n.txt'))).toBe('n')
  })

  it('a lock object is seen by no listing, even at the bucket root, and a path that looks like one is an ordinary file', async () => {
    const fs = await open()
    await fs.writeText(await fs.resolve('x.txt'), 'x')
    await plant(fs, 'x.txt', record('e15e3e4e0000', 1, 60_000))
    // The filesystem of the whole bucket: the lock namespace is the common prefix "/", an empty name.
    const root = new S3FileSystem({ client, bucket })
    const names = (await root.listDir(await root.resolve('/'))).map((e) => e.name)
    expect(names.filter((n) => n === '' || n.includes('seamfs-locks'))).toEqual([])
    const lookalike = await fs.resolve(`/.seamfs-locks/${lockObjectKey(`${fs.prefix}x.txt`).split('/').pop() ?? ''}`)
    await fs.writeText(lookalike, 'just a file')
    expect(await fs.readText(lookalike)).toBe('just a file')
    expect(await lockExists(fs, 'x.txt'), 'the lock object is untouched').toBe(true)
    expect((await fs.listDir(await fs.resolve('/'))).map((e) => e.name)).toEqual(['.seamfs-locks', 'x.txt'])
  })
})
