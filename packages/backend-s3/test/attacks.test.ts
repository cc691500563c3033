/**
 * Attacks on remove / rename / createDirectory on radosgw: another client (the raw
 * client, outside this process's locks) acting at the worst moment of a rename or a recursive
 * remove, keys other tools write (`d//x`, `d/./y`, a file and a marker at one name), the
 * prefix fence, and connections cut in the middle of a rename (a TCP proxy on 127.0.0.1).
 * Each test states a rule of the contract that holds under the attack (or, where radosgw
 * enforces no condition, the behaviour the backend declares instead).
 */
import { GetObjectCommand, ListObjectVersionsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { isFsError, type FsError, type FsErrorCode } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CuttingProxy } from './proxy.js'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

async function failure(operation: Promise<unknown>): Promise<FsError | 'ok'> {
  try {
    await operation
    return 'ok'
  } catch (err) {
    if (isFsError(err)) return err
    throw err
  }
}
const codeOf = async (operation: Promise<unknown>): Promise<FsErrorCode | 'ok'> => {
  const result = await failure(operation)
  return result === 'ok' ? 'ok' : result.code
}

describe.skipIf(server === null)(`S3FileSystem under attack${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let client: S3Client
  const made: [string, string][] = []
  const clients: S3Client[] = []
  const buckets = server === null ? [] : ([server.bucket, server.versionedBucket] as const)

  beforeAll(() => {
    if (server !== null) client = rawClient(server)
  })
  afterAll(async () => {
    if (server === null) return
    for (const [b, p] of made) await purge(client, b, p)
    for (const c of clients) c.destroy()
    client.destroy()
  })

  async function open(bucket: string, options: Partial<S3FileSystemOptions> = {}, prefix = freshPrefix('attacks')): Promise<S3FileSystem> {
    made.push([bucket, prefix])
    return S3FileSystem.open({ client, bucket, prefix, ...options })
  }
  /** A filesystem on its own client, with `before(command)` run right before each request of it is sent. */
  async function hooked(bucket: string, before: (command: string) => Promise<void>, options: Partial<S3FileSystemOptions> = {}): Promise<S3FileSystem> {
    const own = rawClient(server!)
    clients.push(own)
    own.middlewareStack.add((next, context) => async (args) => (await before(context.commandName ?? ''), next(args)), {
      step: 'initialize',
      name: 'attack',
    })
    return open(bucket, { ...options, client: own })
  }
  const rawPut = (bucket: string, key: string, body: string): Promise<unknown> =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: Buffer.byteLength(body) }))
  const rawGet = async (bucket: string, key: string): Promise<string | undefined> => {
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      return await out.Body?.transformToString('utf-8')
    } catch {
      return undefined
    }
  }
  const keysOf = async (bucket: string, prefix: string): Promise<string[]> => {
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))
    return (out.Contents ?? []).map((o) => (o.Key ?? '').slice(prefix.length)).sort()
  }

  describe.each(buckets.map((b) => [b]))('bucket %s', (bucket) => {
    it('a no-overwrite rename never replaces a destination another client creates after its check (versioned: refused under requireAtomicGuards)', async () => {
      const versioned = bucket === server?.versionedBucket
      // Unversioned: the destination is written by a PUT with If-None-Match: * (radosgw ignores it on CopyObject).
      // Versioned: radosgw enforces no PUT or copy condition there; only the process lock guards it, so requireAtomicGuards refuses.
      const sent = versioned ? 'CopyObjectCommand' : 'PutObjectCommand'
      let armed = false
      let prefix = ''
      const fs = await hooked(
        bucket,
        async (command) => {
          if (armed && command === sent) {
            armed = false
            await rawPut(bucket, `${prefix}b.txt`, 'theirs')
          }
        },
        { requireAtomicGuards: versioned },
      )
      prefix = fs.prefix
      await fs.probeMoves()
      await fs.writeText(await fs.resolve('a.txt'), 'mine')
      armed = true
      const outcome = await failure(fs.rename(await fs.resolve('a.txt'), await fs.resolve('b.txt')))
      expect(armed, versioned ? 'nothing was sent' : 'the rename sent its PUT').toBe(versioned)
      expect({
        outcome: outcome === 'ok' ? 'ok' : outcome.code,
        a: await rawGet(bucket, `${prefix}a.txt`),
        b: await rawGet(bucket, `${prefix}b.txt`),
      }).toEqual(versioned ? { outcome: 'FS_UNSUPPORTED', a: 'mine', b: undefined } : { outcome: 'FS_NOT_OBSERVED', a: 'mine', b: 'theirs' })
    })

    it('a recursive remove deletes only the keys it counted: a key another client adds meanwhile stays, and keeps the directory', async () => {
      let armed = false
      let prefix = ''
      const fs = await hooked(bucket, async (command) => {
        if (armed && command === 'DeleteObjectsCommand') {
          armed = false
          await rawPut(bucket, `${prefix}t/late/new.txt`, 'late')
        }
      })
      prefix = fs.prefix
      for (const p of ['t/a.txt', 't/b/c.txt']) await fs.writeText(await fs.resolve(p), p)
      await fs.createDirectory(await fs.resolve('t/empty'))
      armed = true
      expect(await fs.remove(await fs.resolve('t'), { recursive: true })).toEqual({ type: 'directory', entries: 5 })
      expect(await keysOf(bucket, prefix)).toEqual(['t/late/new.txt'])
      expect((await fs.stat(await fs.resolve('t')))?.type).toBe('directory')
      expect(await codeOf(fs.remove(await fs.resolve('t'))), 'not empty, nothing removed').toBe('FS_NOT_EMPTY')
    })

    it('keys no path reaches (`d//x`, `d/./y`) are never removed by a plain remove; the directory stays', async () => {
      const fs = await open(bucket)
      await rawPut(bucket, `${fs.prefix}d//x`, 'x')
      await rawPut(bucket, `${fs.prefix}d/./y`, 'y')
      const d = await fs.resolve('d')
      expect(await fs.listDir(d), 'no entry is named "" or "."').toEqual([])
      expect(await codeOf(fs.remove(d))).toBe('FS_NOT_EMPTY')
      expect(await codeOf(fs.remove(d, { expected: { version: (await fs.stat(d))!.version } }))).toBe('FS_NOT_EMPTY')
      expect(await keysOf(bucket, fs.prefix)).toEqual(['d/./y', 'd//x'])
    })

    it('a file and a marker at one name: stat, remove and createDirectory act on the file only; the marker directory stays', async () => {
      const fs = await open(bucket)
      await fs.createDirectory(await fs.resolve('n'))
      await rawPut(bucket, `${fs.prefix}n`, 'a file too')
      const n = await fs.resolve('n')
      expect((await fs.stat(n))?.type).toBe('file')
      expect(await codeOf(fs.createDirectory(n))).toBe('FS_NOT_DIRECTORY')
      expect(await codeOf(fs.resolve('n/sub').then(async (sub) => fs.createDirectory(sub))), 'resolve refuses a path through the file').toBe('FS_NOT_FOUND')
      expect(await fs.remove(n)).toEqual({ type: 'file', entries: 1 })
      expect(await keysOf(bucket, fs.prefix)).toEqual(['n/'])
      expect((await fs.stat(n))?.type).toBe('directory')
      expect(await codeOf(fs.rename(n, await fs.resolve('m'))), 'the marker directory is no file to move').toBe('FS_UNSUPPORTED')
    })

    it('the prefix fence: the root is never removed or renamed, a sibling prefix is never touched', async () => {
      const outer = freshPrefix('attacks')
      made.push([bucket, outer])
      await rawPut(bucket, `${outer}in-x/keep.txt`, 'sibling')
      await rawPut(bucket, `${outer}in.txt`, 'sibling file')
      const fs = await open(bucket, {}, `${outer}in/`)
      await fs.writeText(await fs.resolve('f.txt'), 'f')
      const root = await fs.resolve('/')
      // The root rule, decided by core for every backend: FS_PERMISSION_DENIED before any request.
      expect(await codeOf(fs.remove(root, { recursive: true }))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.remove(await fs.resolve('..'), { recursive: true })), '.. stops at the root').toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.rename(root, await fs.resolve('x')))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.rename(await fs.resolve('f.txt'), root, { overwrite: true }))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.rename(await fs.resolve('f.txt'), await fs.resolve('../in-x/keep.txt'), { overwrite: true }))).toBe('ok')
      expect(await keysOf(bucket, outer)).toEqual(['in-x/keep.txt', 'in.txt', 'in/in-x/keep.txt'])
      expect(await rawGet(bucket, `${outer}in-x/keep.txt`)).toBe('sibling')
    })
  })

  /** `S3FileSystem` as another process has it: a fresh copy of the package, with its own process-wide locks and gates. */
  async function otherProcess(): Promise<typeof S3FileSystem> {
    const registry = globalThis as unknown as Record<symbol, unknown>
    const keys = [Symbol.for('@seamfs/backend-s3:locks'), Symbol.for('@seamfs/backend-s3:gates')]
    const mine = keys.map((k) => registry[k])
    for (const k of keys) delete registry[k]
    vi.resetModules()
    try {
      const copy = await import('@seamfs/backend-s3')
      expect(copy.S3FileSystem).not.toBe(S3FileSystem)
      return copy.S3FileSystem
    } finally {
      keys.forEach((k, i) => (registry[k] = mine[i]))
    }
  }

  it.each(buckets.map((b) => [b]))(
    'two processes rename two files onto one new name (no overwrite): one wins, nothing is lost (versioned: refused under requireAtomicGuards), bucket %s',
    async (bucket) => {
      const ROUNDS = 5
      // radosgw enforces If-None-Match: * on PUT only in the unversioned bucket; in the versioned one only the process lock guards `to`.
      const versioned = bucket === server?.versionedBucket
      const prefix = freshPrefix('attacks')
      made.push([bucket, prefix])
      const [One, Two] = [await otherProcess(), await otherProcess()]
      const options = { client, bucket, prefix, requireAtomicGuards: versioned }
      const [one, two] = [await One.open(options), await Two.open(options)]
      await Promise.all([one.probeMoves(), two.probeMoves()])
      const lost: string[] = []
      const outcomes: string[] = []
      for (let round = 0; round < ROUNDS; round++) {
        await one.writeText(await one.resolve(`x${round}.txt`), `x${round}`)
        await two.writeText(await two.resolve(`y${round}.txt`), `y${round}`)
        const to = `to${round}.txt`
        const codes = await Promise.all([
          codeOf(one.rename(await one.resolve(`x${round}.txt`), await one.resolve(to))),
          codeOf(two.rename(await two.resolve(`y${round}.txt`), await two.resolve(to))),
        ])
        outcomes.push(codes.sort().join(' '))
        const held = [await rawGet(bucket, `${prefix}x${round}.txt`), await rawGet(bucket, `${prefix}y${round}.txt`), await rawGet(bucket, `${prefix}${to}`)]
        for (const content of [`x${round}`, `y${round}`]) if (!held.includes(content)) lost.push(`round ${round}: ${content} lost (${codes.join(' ')})`)
      }
      // Contract: "an existing `to` is FS_NOT_OBSERVED unless overwrite"; "at every moment at least one of the two names holds the whole content".
      expect(lost).toEqual([])
      expect(new Set(outcomes)).toEqual(new Set([versioned ? 'FS_UNSUPPORTED FS_UNSUPPORTED' : 'FS_NOT_OBSERVED ok']))
    },
  )

  it('versioned bucket: a source rewritten by another client just before the DELETE is kept (the exact version copied is deleted, by VersionId)', async () => {
    let armed = false
    let prefix = ''
    const bucket = server!.versionedBucket
    const fs = await hooked(bucket, async (command) => {
      if (armed && command === 'DeleteObjectCommand') {
        armed = false
        await rawPut(bucket, `${prefix}a.txt`, 'rewritten meanwhile')
      }
    })
    prefix = fs.prefix
    await fs.probeMoves()
    await fs.writeText(await fs.resolve('a.txt'), 'moved')
    armed = true
    const outcome = await failure(fs.rename(await fs.resolve('a.txt'), await fs.resolve('b.txt')))
    expect(armed, 'the rename sent its DELETE').toBe(false)
    // moves.ts: "If the source changed or went between 3 and 4 … it is kept": the DELETE names the VersionId copied; the rewrite stays current.
    expect({ outcome: outcome === 'ok' ? 'ok' : outcome.code, a: await rawGet(bucket, `${prefix}a.txt`) }).toEqual({
      outcome: 'FS_STALE_VERSION',
      a: 'rewritten meanwhile',
    })
  })

  it("versioned bucket: a version another client writes between a guarded remove's check and its DELETE is hidden, not destroyed (removeIfVersion 'process')", async () => {
    let armed = false
    let prefix = ''
    const bucket = server!.versionedBucket
    const fs = await hooked(bucket, async (command) => {
      if (armed && command === 'DeleteObjectCommand') {
        armed = false
        await rawPut(bucket, `${prefix}g.txt`, 'rewritten meanwhile')
      }
    })
    prefix = fs.prefix
    await fs.probeMoves()
    const { version } = await fs.writeText(await fs.resolve('g.txt'), 'seen')
    armed = true
    expect(await codeOf(fs.remove(await fs.resolve('g.txt'), { expected: { version } })), 'outside the lock: not caught').toBe('ok')
    expect(armed, 'the remove sent its DELETE').toBe(false)
    const out = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: `${prefix}g.txt` }))
    expect((out.DeleteMarkers ?? []).filter((m) => m.IsLatest === true)).toHaveLength(1)
    const versions = await Promise.all(
      (out.Versions ?? []).map(async (v) => {
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}g.txt`, VersionId: v.VersionId }))
        return got.Body?.transformToString('utf-8')
      }),
    )
    expect(versions.sort()).toEqual(['rewritten meanwhile', 'seen'])
  })

  describe('connections cut mid-rename', () => {
    let proxy: CuttingProxy
    let viaProxy: S3Client
    const bucket = server?.bucket ?? ''

    beforeAll(async () => {
      if (server === null) return
      proxy = await CuttingProxy.start(Number(new URL(server.endpoint).port))
      viaProxy = rawClient(server, { endpoint: proxy.endpoint })
    })
    afterAll(async () => {
      viaProxy?.destroy()
      await proxy?.close()
    })

    it('every answer to the DELETE of the source lost: the content is under one name at least, the error is retryable', async () => {
      proxy.disarm()
      const fs = await open(bucket, { client: viaProxy })
      await fs.probeMoves()
      await fs.writeText(await fs.resolve('a.txt'), 'payload')
      proxy.arm({ direction: 'down', method: 'DELETE', afterBytes: 0 })
      const outcome = await failure(fs.rename(await fs.resolve('a.txt'), await fs.resolve('b.txt')))
      proxy.disarm()
      const [a, b] = [await rawGet(bucket, `${fs.prefix}a.txt`), await rawGet(bucket, `${fs.prefix}b.txt`)]
      expect([a, b]).toContain('payload')
      if (outcome !== 'ok') expect([outcome.code, outcome.retryable]).toEqual(['FS_IO_ERROR', true])
    })

    it('every answer to the write of `to` lost: the rename fails, retryable, and leaves both names as they were', async () => {
      proxy.disarm()
      const fs = await open(bucket, { client: viaProxy })
      await fs.probeMoves()
      await fs.writeText(await fs.resolve('a.txt'), 'payload')
      const cuts = proxy.cuts
      proxy.arm({ direction: 'down', method: 'PUT', afterBytes: 0 })
      const outcome = await failure(fs.rename(await fs.resolve('a.txt'), await fs.resolve('b.txt')))
      proxy.disarm()
      expect(proxy.cuts - cuts).toBeGreaterThan(0)
      expect(outcome === 'ok' ? 'ok' : [outcome.code, outcome.retryable]).toEqual(['FS_IO_ERROR', true])
      expect(await rawGet(bucket, `${fs.prefix}a.txt`), 'the source is kept').toBe('payload')
      // Contract: "a failed or aborted rename leaves both names as they were": the copy that landed unanswered is deleted again.
      expect(await rawGet(bucket, `${fs.prefix}b.txt`), 'the destination is as it was (absent)').toBeUndefined()
    })
  })
})
