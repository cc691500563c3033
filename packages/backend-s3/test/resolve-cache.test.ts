/**
 * On radosgw: what `resolve` remembers (`resolveCacheMs`) and the one-PUT replace
 * (`replaceIfVersion` with `before: false`), and what they answer when this instance, or another
 * client behind its back, changes the path in between.
 */
import { codeOf } from '@seamfs/conformance'
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import type { FsVersion } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

describe.skipIf(server === null)(`S3FileSystem: resolve's memory and the one-PUT replace${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let client: S3Client
  const prefixes: string[] = []
  const bucket = server?.bucket ?? ''

  beforeAll(() => {
    if (server !== null) client = rawClient(server)
  })
  afterAll(async () => {
    if (server === null) return
    for (const p of prefixes) await purge(client, bucket, p)
    client.destroy()
  })

  async function make(options: Partial<S3FileSystemOptions> = {}): Promise<S3FileSystem> {
    const prefix = options.prefix ?? freshPrefix('resolve-cache')
    prefixes.push(prefix)
    return S3FileSystem.open({ client, bucket, ...options, prefix })
  }
  /** Another client's write, behind the filesystem's back. */
  const put = (fs: S3FileSystem, path: string, body: string): Promise<unknown> =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: fs.prefix + path, Body: body, ContentLength: Buffer.byteLength(body) }))
  const keys = async (fs: S3FileSystem): Promise<string[]> =>
    ((await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: fs.prefix }))).Contents ?? []).map((o) => (o.Key ?? '').slice(fs.prefix.length))

  it('resolveCacheMs must be a non-negative integer', () => {
    for (const bad of [-1, 1.5, Number.NaN]) expect(() => new S3FileSystem({ client, bucket, resolveCacheMs: bad })).toThrow(RangeError)
  })

  it('this instance writing a file where a checked directory was: resolve refuses paths through it at once', async () => {
    const fs = await make()
    await fs.resolve('p/x.txt')
    await fs.writeText(await fs.resolve('p'), 'now a file')
    expect(await codeOf(fs.resolve('p/y.txt'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('p/x.txt'))).toBe('FS_NOT_FOUND')
  })

  it('a file another client put on a remembered path: resolve answers as when it checked, every operation meets the file, and the first that does makes resolve forget', async () => {
    const fs = await make()
    const fresh = new S3FileSystem({ client, bucket, prefix: fs.prefix, resolveCacheMs: 0 })
    await fs.resolve('q/a.txt')
    await put(fs, 'q', 'a file now')
    expect(await codeOf(fresh.resolve('q/b.txt')), 'without memory').toBe('FS_NOT_FOUND')
    const t = await fs.resolve('q/b.txt')
    expect(await fs.stat(t)).toBeUndefined()
    expect(await codeOf(fs.readText(t))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.writeText(t, 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('q/b.txt')), 'the write found the file: resolve forgot q').toBe('FS_NOT_FOUND')
    for (const options of [{}, { before: false }]) expect(await codeOf(fs.writeText(t, 'x', options)), JSON.stringify(options)).toBe('FS_NOT_FOUND')
    expect(await keys(fs)).toEqual(['q'])
  })

  it('a remove by this instance makes resolve check again (the directory may be gone)', async () => {
    const fs = await make()
    const only = await fs.resolve('r/only.txt')
    await fs.writeText(only, 'x')
    await fs.remove(only)
    await put(fs, 'r', 'a file where the directory was')
    expect(await codeOf(fs.resolve('r/x.txt'))).toBe('FS_NOT_FOUND')
  })

  it('replaceIfVersion without before sends only versions shaped like an ETag: a forged *, list, quoted, #-suffixed or empty one is FS_STALE_VERSION and changes nothing', async () => {
    const fs = await make()
    const t = await fs.resolve('f.txt')
    const { version } = await fs.writeText(t, 'kept')
    const forged = ['*', `${version}, *`, `"${version}"`, `W/"${version}"`, `${version}#v`, version.toUpperCase(), `${version}\r\nx-amz-meta-a: b`, '']
    for (const v of forged) {
      const expected = { kind: 'replaceIfVersion', version: v as FsVersion } as const
      expect(await codeOf(fs.writeText(t, 'clobbered', { expected, before: false })), JSON.stringify(v)).toBe('FS_STALE_VERSION')
    }
    expect(await fs.readText(t)).toBe('kept')
    expect((await fs.stat(t))?.version).toBe(version)
  })

  it('replaceIfVersion without before on a key another client removed, replaced by a directory, or rewrote: stale or not a file, nothing written', async () => {
    const fs = await make()
    const t = await fs.resolve('g.txt')
    const { version } = await fs.writeText(t, 'one')
    const replace = { expected: { kind: 'replaceIfVersion', version }, before: false } as const
    await put(fs, 'g.txt', 'two')
    expect(await codeOf(fs.writeText(t, 'mine', replace)), 'rewritten').toBe('FS_STALE_VERSION')
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${fs.prefix}gone.txt`, Body: 'x', ContentLength: 1 }))
    const gone = await fs.resolve('gone.txt')
    const goneVersion = (await fs.stat(gone))?.version as FsVersion
    await fs.remove(gone)
    expect(await codeOf(fs.writeText(gone, 'mine', { expected: { kind: 'replaceIfVersion', version: goneVersion }, before: false })), 'removed').toBe(
      'FS_STALE_VERSION',
    )
    await put(fs, 'd/inner.txt', 'x')
    expect(await codeOf(fs.writeText(await fs.resolve('d'), 'mine', replace)), 'a directory').toBe('FS_NOT_REGULAR_FILE')
    expect((await keys(fs)).sort()).toEqual(['d/inner.txt', 'g.txt'])
    expect(await fs.readText(t)).toBe('two')
  })
})
