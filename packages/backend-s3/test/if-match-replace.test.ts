/**
 * On radosgw: the one-PUT replace (`replaceIfVersion` with `before: false`)
 * against a server that lets `If-Match` through on a missing key (MinIO before minio/minio#21526,
 * versitygw before versity/versitygw#1709: the PUT creates the object), and the clock that
 * `resolve`'s memory trusts.
 */
import { codeOf } from '@seamfs/conformance'
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { isFsError } from '@seamfs/core'
import { S3FileSystem } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ClearPaths } from '../src/clear-paths.js'
import { CuttingProxy, type CutRule } from './proxy.js'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

/**
 * Makes radosgw behave like a server that checks `If-Match` only when the key exists: before
 * signing, a PUT's `If-Match` header is dropped when `peek` finds no object at the key.
 */
function ignoreIfMatchOnMissingKeys(client: S3Client, peek: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Bucket?: string; Key?: string; IfMatch?: string }
      const request = args.request as { headers?: Record<string, string> }
      if (context.commandName === 'PutObjectCommand' && input.IfMatch !== undefined && request.headers !== undefined) {
        const exists = await peek.send(new HeadObjectCommand({ Bucket: input.Bucket, Key: input.Key })).then(
          () => true,
          () => false,
        )
        if (!exists) for (const name of Object.keys(request.headers)) if (name.toLowerCase() === 'if-match') delete request.headers[name]
      }
      return next(args)
    },
    { step: 'build', name: 'reviewIgnoreIfMatchOnMissing' },
  )
}

describe.skipIf(server === null)(`S3FileSystem, a replace guarded by If-Match${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let client: S3Client
  let lax: S3Client
  const prefixes: string[] = []
  const bucket = server?.bucket ?? ''

  beforeAll(() => {
    if (server === null) return
    client = rawClient(server)
    lax = rawClient(server)
    ignoreIfMatchOnMissingKeys(lax, client)
  })
  afterAll(async () => {
    if (server === null) return
    for (const p of prefixes) await purge(client, bucket, p)
    lax.destroy()
    client.destroy()
  })

  const keys = async (prefix: string): Promise<string[]> =>
    ((await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => (o.Key ?? '').slice(prefix.length)).sort()

  it('a server that lets If-Match through on a missing key: replaceIfVersion without before never creates a file', async () => {
    const prefix = freshPrefix('review')
    prefixes.push(prefix)
    const fs = await S3FileSystem.open({ client: lax, bucket, prefix })
    // Such a server's guard is not atomic (a file deleted between the check and the PUT would come back): it says so.
    expect(fs.probeResult?.ifMatchRefusesMissing).toBe(false)
    expect(fs.capabilities.replaceIfVersion).toBe('process')
    const { version } = await fs.writeText(await fs.resolve('kept.txt'), 'kept')
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}d/inner.txt`, Body: 'x', ContentLength: 1 }))
    const replace = { expected: { kind: 'replaceIfVersion', version }, before: false } as const
    expect(await codeOf(fs.writeText(await fs.resolve('missing.txt'), 'made', replace)), 'a missing file').toBe('FS_STALE_VERSION')
    const d = await fs.resolve('d')
    const dirVersion = (await fs.stat(d))?.version ?? version
    expect(await codeOf(fs.writeText(d, 'made', { expected: { kind: 'replaceIfVersion', version: dirVersion }, before: false })), 'a directory').toBe(
      'FS_NOT_REGULAR_FILE',
    )
    expect(await keys(prefix)).toEqual(['d/inner.txt', 'kept.txt'])
    // Where the key exists the server still checks: the one-PUT replace of the current version works.
    const replaced = await fs.writeText(await fs.resolve('kept.txt'), 'new', replace)
    expect((await fs.stat(await fs.resolve('kept.txt')))?.version).toBe(replaced.version)
  })

  it('radosgw refuses If-Match on a missing key: the probe says so, and the one-PUT replace stays one PUT', async () => {
    const prefix = freshPrefix('review')
    prefixes.push(prefix)
    const fs = await S3FileSystem.open({ client, bucket, prefix })
    expect(fs.probeResult?.ifMatchRefusesMissing).toBe(true)
    const laxFs = await S3FileSystem.open({ client: lax, bucket, prefix })
    expect(laxFs.probeResult?.ifMatchRefusesMissing).toBe(false)
    expect(await keys(prefix)).toEqual([])
  })

  it('the one-PUT replace cut on the way up or down: done (content and version agree with the store) or a retryable error with the store as it was', async () => {
    const proxy = await CuttingProxy.start(Number(new URL(server?.endpoint ?? '').port))
    const viaProxy = rawClient(server!, { endpoint: proxy.endpoint })
    const prefix = freshPrefix('review')
    prefixes.push(prefix)
    try {
      const fs = await S3FileSystem.open({ client: viaProxy, bucket, prefix })
      const t = await fs.resolve('cut.txt')
      let { version } = await fs.writeText(t, 'v0')
      const rules: CutRule[] = [
        { direction: 'down', method: 'PUT', afterBytes: 0, times: 1 },
        { direction: 'up', method: 'PUT', afterBytes: 10, times: 1 },
        { direction: 'down', method: 'PUT', afterBytes: 0, times: 3 },
      ]
      for (const [i, rule] of rules.entries()) {
        const before = await stored(prefix, 'cut.txt')
        proxy.arm(rule)
        const outcome = await fs.writeText(t, `v${i + 1}`, { expected: { kind: 'replaceIfVersion', version }, before: false }).catch((err: unknown) => err)
        proxy.disarm()
        const now = await stored(prefix, 'cut.txt')
        if (isFsError(outcome)) {
          expect([outcome.code, outcome.retryable, now.body], JSON.stringify(rule)).toEqual(['FS_IO_ERROR', true, before.body])
        } else {
          const done = outcome as { version: string }
          expect([now.body, now.etag], JSON.stringify(rule)).toEqual([`v${i + 1}`, done.version])
          version = (await fs.stat(t))?.version ?? version
          expect(version).toBe(done.version)
        }
      }
    } finally {
      viaProxy.destroy()
      await proxy.close()
    }
  })

  const stored = async (prefix: string, path: string): Promise<{ body: string; etag: string }> => {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: prefix + path }))
    return { body: (await out.Body?.transformToString('utf-8')) ?? '', etag: (out.ETag ?? '').replaceAll('"', '') }
  }
})

describe("resolve's memory", () => {
  it('is not extended by a wall clock stepped back (NTP, a resumed VM): it ages on a monotonic clock', () => {
    const paths = new ClearPaths(1_000)
    paths.remember('p', paths.begin())
    expect(paths.has('p')).toBe(true)
    const wall = Date.now()
    const mono = performance.now()
    const dateNow = vi.spyOn(Date, 'now').mockReturnValue(wall - 3_600_000)
    const perfNow = vi.spyOn(performance, 'now').mockReturnValue(mono + 1_001)
    try {
      expect(paths.has('p')).toBe(false)
    } finally {
      dateNow.mockRestore()
      perfNow.mockRestore()
    }
  })
})
