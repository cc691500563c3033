/**
 * What is specific to S3 (beyond the conformance kit): the capability probe on both buckets,
 * requireAtomicGuards, prefix scoping, directory markers, revision tokens, the size limit
 * checked on the GET's headers, abort of a streamed GET, and a client built from options.
 */
import { codeOf } from '@seamfs/conformance'
import { Readable } from 'node:stream'
import { HeadObjectCommand, ListObjectVersionsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { FsTargetKey } from '@seamfs/core/backend'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

describe.skipIf(server === null)(`S3FileSystem on radosgw${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let client: S3Client
  const prefixes: [string, string][] = []
  const bucket = server?.bucket ?? ''
  const versioned = server?.versionedBucket ?? ''

  beforeAll(() => {
    if (server !== null) client = rawClient(server)
  })
  afterAll(async () => {
    if (server === null) return
    for (const [b, p] of prefixes) await purge(client, b, p)
    client.destroy()
  })

  function make(options: Partial<S3FileSystemOptions> = {}, b = bucket): S3FileSystem {
    const prefix = options.prefix ?? freshPrefix('s3')
    prefixes.push([b, `${prefix.split('/')[0] ?? prefix}/`])
    return new S3FileSystem({ client, bucket: b, ...options, prefix })
  }
  const put = (b: string, key: string, body: string): Promise<unknown> =>
    client.send(new PutObjectCommand({ Bucket: b, Key: key, Body: body, ContentLength: Buffer.byteLength(body) }))

  describe('the capability probe', () => {
    it('unversioned bucket: both conditions enforced, If-Match unquoted → atomic guards; lock objects → seamfs remove guards', async () => {
      const fs = make()
      expect([fs.capabilities.createIfAbsent, fs.capabilities.replaceIfVersion]).toEqual(['process', 'process'])
      const result = await fs.probe()
      console.log(`probe, unversioned bucket: ${JSON.stringify(result)}`)
      expect(result).toEqual({
        createIfAbsent: true,
        replaceIfVersion: true,
        ifMatchForm: 'unquoted',
        ifMatchRefusesMissing: true,
        versioned: false,
        lockObjects: true,
      })
      expect([fs.capabilities.createIfAbsent, fs.capabilities.replaceIfVersion, fs.capabilities.removeIfVersion]).toEqual(['atomic', 'atomic', 'seamfs'])
    })

    it('versioned bucket: radosgw ignores If-None-Match and never meets If-Match → process guards', async () => {
      const fs = make({}, versioned)
      const result = await fs.probe()
      console.log(`probe, versioned bucket: ${JSON.stringify(result)}`)
      expect(result).toEqual({
        createIfAbsent: false,
        replaceIfVersion: false,
        ifMatchForm: null,
        ifMatchRefusesMissing: false,
        versioned: true,
        lockObjects: false,
      })
      expect([fs.capabilities.createIfAbsent, fs.capabilities.replaceIfVersion, fs.capabilities.removeIfVersion]).toEqual(['process', 'process', 'process'])
    })

    it('leaves no object and no version behind, and its scratch key is never listed', async () => {
      for (const b of [bucket, versioned]) {
        const fs = make({}, b)
        const listing = fs.probe().then(async () => fs.listDir(await fs.resolve('/')))
        expect(await fs.listDir(await fs.resolve('/'))).toEqual([])
        expect(await listing).toEqual([])
        const out = await client.send(new ListObjectVersionsCommand({ Bucket: b, Prefix: fs.prefix }))
        expect([...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])]).toEqual([])
      }
    })

    it('requireAtomicGuards: guarded writes are FS_UNSUPPORTED where the server ignores conditions', async () => {
      const fs = make({ requireAtomicGuards: true }, versioned)
      const t = await fs.resolve('a.txt')
      const { version } = await fs.writeText(t, 'plain writes still work')
      expect(await codeOf(fs.writeText(t, 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_UNSUPPORTED')
      expect(await codeOf(fs.writeText(t, 'x', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_UNSUPPORTED')
      expect(await codeOf(fs.editText(t, { oldString: 'plain', newString: 'x', replaceAll: false }, { expected: { version } }))).toBe('FS_UNSUPPORTED')
      await fs.editText(t, { oldString: 'plain', newString: 'unguarded', replaceAll: false })
      expect(await fs.readText(t)).toBe('unguarded writes still work')
      const atomic = make({ requireAtomicGuards: true })
      const created = await atomic.writeText(await atomic.resolve('a.txt'), 'x', { expected: { kind: 'createIfAbsent' } })
      expect(created.operation).toBe('create')
    })
  })

  describe('versions are revisions', () => {
    it('versioned bucket: rewriting the same content is a new version (VersionId); unversioned: the same (ETag)', async () => {
      const v = await S3FileSystem.open({ client, bucket: versioned, prefix: make({}, versioned).prefix })
      const tv = await v.resolve('same.txt')
      const [a, b] = [await v.writeText(tv, 'same'), await v.writeText(tv, 'same')]
      expect(a.version).not.toBe(b.version)
      expect((await v.stat(tv))?.version).toBe(b.version)
      const u = make()
      const tu = await u.resolve('same.txt')
      expect((await u.writeText(tu, 'same')).version).toBe((await u.writeText(tu, 'same')).version)
    })
  })

  describe('prefix scoping', () => {
    it('no path leaves the prefix: .., absolute paths, encoded and backslashed separators, cwd', async () => {
      const outer = freshPrefix('scope')
      const fs = make({ prefix: `${outer}inner` })
      const attempts = ['../escape.txt', '/../../up.txt', 'a/../../../../down.txt', '..%2F..%2Fenc.txt', '..\\..\\bs.txt', '/abs.txt', './/.//w.txt']
      for (const path of attempts) await fs.writeText(await fs.resolve(path), path)
      await fs.writeText(await fs.resolve('x.txt', { cwd: '../../..' }), 'cwd above the root')
      const out = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: outer }))
      const keys = (out.Versions ?? []).map((v) => v.Key ?? '')
      expect(keys.length).toBe(attempts.length + 1)
      expect(keys.every((k) => k.startsWith(`${outer}inner/`))).toBe(true)
      expect((await fs.resolve('../../etc/passwd')).displayPath).toBe('/etc/passwd')
      expect(fs.fileUrl(await fs.resolve('a b.txt'))).toBe(`s3://${bucket}/${outer}inner/a%20b.txt`)
    })

    it('a sibling prefix is invisible; foreign or forged targets are FS_NOT_FOUND', async () => {
      const outer = freshPrefix('scope')
      const fs = make({ prefix: `${outer}a` })
      const sibling = make({ prefix: `${outer}ab` })
      await put(bucket, `${outer}ab/secret.txt`, 'not yours')
      await put(bucket, `${outer}a.txt`, 'not yours either')
      await fs.writeText(await fs.resolve('mine.txt'), 'mine')
      expect((await fs.listDir(await fs.resolve('/'))).map((e) => e.name)).toEqual(['mine.txt'])
      const foreign = await sibling.resolve('secret.txt')
      expect(await codeOf(fs.readText(foreign))).toBe('FS_NOT_FOUND')
      expect(await codeOf(fs.writeText(foreign, 'x'))).toBe('FS_NOT_FOUND')
      const forged = { targetKey: FsTargetKey(`s3://${bucket}/${outer}a/../ab/secret.txt`), displayPath: '/x' }
      expect(await codeOf(fs.readText(forged))).toBe('FS_NOT_FOUND')
      expect(await codeOf(fs.writeText(forged, 'x'))).toBe('FS_NOT_FOUND')
      expect(fs.contains(await fs.resolve('/'), foreign)).toBe(false)
    })

    it('refuses a prefix with . or .. segments and a page size outside 1..1000', () => {
      expect(() => new S3FileSystem({ client, bucket, prefix: 'a/../b' })).toThrow(RangeError)
      expect(() => new S3FileSystem({ client, bucket, pageSize: 0 })).toThrow(RangeError)
      expect(() => new S3FileSystem({ client, bucket, pageSize: 1001 })).toThrow(RangeError)
      expect(new S3FileSystem({ client, bucket, prefix: '//a//b/' }).prefix).toBe('a/b/')
    })
  })

  describe('directories', () => {
    it('a zero-byte dir/ marker is an empty directory; writing over it is FS_NOT_REGULAR_FILE', async () => {
      const fs = make()
      await put(bucket, `${fs.prefix}empty/`, '')
      await put(bucket, `${fs.prefix}m/`, '')
      await put(bucket, `${fs.prefix}m/a.txt`, 'a')
      expect((await fs.stat(await fs.resolve('empty')))?.type).toBe('directory')
      expect(await fs.listDir(await fs.resolve('empty'))).toEqual([])
      expect((await fs.listDir(await fs.resolve('m'))).map((e) => e.name)).toEqual(['a.txt'])
      expect((await fs.listDir(await fs.resolve('/'))).map((e) => [e.name, e.type])).toEqual([
        ['empty', 'directory'],
        ['m', 'directory'],
      ])
      expect(await codeOf(fs.writeText(await fs.resolve('empty'), 'x'))).toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(fs.readText(await fs.resolve('empty')))).toBe('FS_NOT_REGULAR_FILE')
      await fs.writeText(await fs.resolve('empty/now.txt'), 'no longer empty')
      expect((await fs.listDir(await fs.resolve('empty'))).map((e) => e.name)).toEqual(['now.txt'])
    })

    it('a key that is both an object and a prefix shows as the file; paths through it are FS_NOT_FOUND', async () => {
      const fs = make()
      await put(bucket, `${fs.prefix}both`, 'file')
      await put(bucket, `${fs.prefix}both/child.txt`, 'child')
      expect((await fs.stat(await fs.resolve('both')))?.type).toBe('file')
      expect((await fs.listDir(await fs.resolve('/'))).map((e) => [e.name, e.type])).toEqual([['both', 'file']])
      expect(await codeOf(fs.resolve('both/child.txt'))).toBe('FS_NOT_FOUND')
    })

    it('listing pages of one entry merge files and prefixes in code-point order', async () => {
      const fs = make({ pageSize: 1 })
      for (const path of ['a', 'a.txt', 'a-b', 'b/c', 'a0/x', '中/y', 'Z']) await put(bucket, `${fs.prefix}${path}`, path)
      const entries = await fs.listDir(await fs.resolve('/'))
      expect(entries.map((e) => `${e.name}:${e.type}`)).toEqual(['Z:file', 'a:file', 'a-b:file', 'a.txt:file', 'a0:directory', 'b:directory', '中:directory'])
    })
  })

  describe('size limits', () => {
    it('an object above maxTextBytes: readText and editText are FS_TOO_LARGE on the GET headers; the body is never read; the object is unchanged', async () => {
      if (server === null) return
      const watched = rawClient(server)
      const requests: string[] = []
      const bodies: Readable[] = []
      // Once per HTTP attempt: the command, and the raw response body (the stream the SDK hands out as Body).
      // The edit's lock object (a PUT before, a DELETE after, at /.seamfs-locks/…) is not the object's.
      watched.middlewareStack.add(
        (next, context) => async (args) => {
          if (((args.input as { Key?: string }).Key ?? '').startsWith('/.seamfs-locks/')) return next(args)
          requests.push(context.commandName ?? '?')
          const out = await next(args)
          const body = (out.response as { body?: unknown }).body
          if (body instanceof Readable) bodies.push(body)
          return out
        },
        { step: 'deserialize', name: 'watchBodies' },
      )
      try {
        const prefix = make().prefix
        const fs = await S3FileSystem.open({ client: watched, bucket, prefix, maxTextBytes: 1000 })
        const t = await fs.resolve('big.txt')
        await put(bucket, `${prefix}big.txt`, 'x'.repeat(1001))
        const etag = async (): Promise<string | undefined> => (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}big.txt` }))).ETag
        const before = await etag()
        for (const operation of [() => fs.readText(t), () => fs.editText(t, { oldString: 'x', newString: 'y', replaceAll: true })]) {
          requests.length = 0
          bodies.length = 0
          expect(await codeOf(operation())).toBe('FS_TOO_LARGE')
          expect(requests).toEqual(['GetObjectCommand'])
          expect(bodies.map((b) => [b.destroyed, b.readableDidRead])).toEqual([[true, false]])
        }
        expect(await etag()).toBe(before)
        let streamed = 0
        for await (const chunk of await fs.streamText(t)) streamed += chunk.length
        expect(streamed).toBe(1001)
        await fs.writeText(t, 'x'.repeat(1000))
        expect(await fs.readText(t)).toBe('x'.repeat(1000))
      } finally {
        watched.destroy()
      }
    })
  })

  describe('streaming and clients', () => {
    it('aborting a streamed read mid-way ends it with FS_ABORTED', async () => {
      const fs = make()
      const t = await fs.resolve('big.txt')
      await fs.writeText(t, 'z'.repeat(8 * 1024 * 1024))
      const controller = new AbortController()
      let chunks = 0
      const reading = (async () => {
        for await (const chunk of await fs.streamText(t, { signal: controller.signal })) {
          if (++chunks === 1) controller.abort()
          void chunk
        }
      })()
      expect(await codeOf(reading)).toBe('FS_ABORTED')
      expect(chunks).toBeGreaterThanOrEqual(1)
      expect((await fs.readText(t)).length).toBe(8 * 1024 * 1024)
    })

    it('builds its own client from endpoint, region, credentials and forcePathStyle, and destroys it on close', async () => {
      if (server === null) return
      const prefix = make().prefix
      const fs = await S3FileSystem.open({
        bucket,
        prefix,
        endpoint: server.endpoint,
        region: server.region,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        forcePathStyle: true,
      })
      const t = await fs.resolve('own-client.txt')
      await fs.writeText(t, 'streamed body, plain Content-Length')
      expect(await fs.readText(t)).toBe('streamed body, plain Content-Length')
      await fs.close()
      await fs.close()
    })
  })
})
