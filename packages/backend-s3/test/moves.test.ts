/**
 * remove, rename and createDirectory on radosgw, on both buckets, beyond the conformance kit:
 * what the second probe finds, delete markers, `dir/` markers as other tools see them,
 * mtime, renames racing across separate clients, and a source changed by "another process"
 * (the raw client, behind the backend's locks) between the copy and the delete.
 */
import { DeleteObjectCommand, HeadObjectCommand, ListObjectVersionsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { isFsError, type FsErrorCode, type FsError } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const RACERS = 8

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

describe.skipIf(server === null)(`S3FileSystem remove / rename / createDirectory${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let client: S3Client
  const made: [string, string][] = []
  const buckets = server === null ? [] : ([server.bucket, server.versionedBucket] as const)

  beforeAll(() => {
    if (server !== null) client = rawClient(server)
  })
  afterAll(async () => {
    if (server === null) return
    for (const [b, p] of made) await purge(client, b, p)
    client.destroy()
  })

  async function open(bucket: string, options: Partial<S3FileSystemOptions> = {}, prefix = freshPrefix('moves')): Promise<S3FileSystem> {
    made.push([bucket, prefix])
    return S3FileSystem.open({ client, bucket, prefix, ...options })
  }
  const keysOf = async (fs: S3FileSystem): Promise<string[]> => {
    const out = await client.send(new ListObjectsV2Command({ Bucket: fs.bucket, Prefix: fs.prefix }))
    return (out.Contents ?? []).map((o) => (o.Key ?? '').slice(fs.prefix.length)).sort()
  }
  const read = async (fs: S3FileSystem, path: string): Promise<string | undefined> =>
    (await fs.stat(await fs.resolve(path))) === undefined ? undefined : fs.readText(await fs.resolve(path))

  it('the second probe: radosgw checks the copy source only through x-amz-copy-if-match, and no DELETE or copy-destination condition', async () => {
    const [unversioned, versioned] = await Promise.all(buckets.map((b) => open(b)))
    for (const fs of [unversioned, versioned]) {
      expect(fs?.moveProbeResult).toBeUndefined()
      expect(await fs?.probeMoves()).toEqual({ deleteIfMatch: false, copySourceIfMatch: 'rgw', copyIfNoneMatch: false, copyIfMatch: false })
      const out = await client.send(new ListObjectVersionsCommand({ Bucket: fs?.bucket, Prefix: fs?.prefix }))
      expect([...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])], 'the probe leaves nothing behind').toEqual([])
    }
    expect(unversioned?.capabilities).toMatchObject({ remove: true, rename: 'copy', renameDirectories: false, createDirectory: 'marker', mtime: true })
  })

  describe.each(buckets.map((b) => [b]))('bucket %s', (bucket) => {
    it('a guarded remove: a stale version keeps the file; the current one removes it (a delete marker where versioned)', async () => {
      const fs = await open(bucket)
      const t = await fs.resolve('g.txt')
      const first = await fs.writeText(t, 'one')
      const second = await fs.writeText(t, 'two')
      expect(await codeOf(fs.remove(t, { expected: { version: first.version } }))).toBe('FS_STALE_VERSION')
      expect(await read(fs, 'g.txt')).toBe('two')
      expect(await fs.remove(t, { expected: { version: second.version } })).toEqual({ type: 'file', entries: 1 })
      expect(await fs.stat(t)).toBeUndefined()
      const out = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: `${fs.prefix}g.txt` }))
      expect((out.DeleteMarkers ?? []).length).toBe(bucket === server?.versionedBucket ? 1 : 0)
    })

    it("a guarded remove of a directory: stat's version removes it, another is stale, a file at its key is never removed", async () => {
      const fs = await open(bucket)
      await fs.writeText(await fs.resolve('d/f.txt'), 'f')
      const d = await fs.resolve('d')
      const version = (await fs.stat(d))?.version
      expect(version).toBeDefined()
      const expected = { version: version! }
      expect(await codeOf(fs.remove(d, { expected: { version: (await fs.stat(await fs.resolve('d/f.txt')))!.version }, recursive: true }))).toBe(
        'FS_STALE_VERSION',
      )
      expect(await codeOf(fs.remove(d, { expected })), 'not empty, guarded by its own version').toBe('FS_NOT_EMPTY')
      expect(await codeOf(fs.rename(d, await fs.resolve('e'), { expected })), 'no directory renames on S3').toBe('FS_UNSUPPORTED')
      // Another client writes an object at the directory's own key: stat says file now, and the guard refuses it.
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${fs.prefix}d`, Body: 'a file now' }))
      expect(await codeOf(fs.remove(d, { expected, recursive: true }))).toBe('FS_STALE_VERSION')
      expect(await keysOf(fs)).toEqual(['d', 'd/f.txt'])
      await fs.remove(d)
      expect(await fs.remove(d, { expected, recursive: true })).toEqual({ type: 'directory', entries: 2 })
      expect(await keysOf(fs)).toEqual([])
      expect(await codeOf(fs.remove(d, { expected, recursive: true })), 'gone').toBe('FS_STALE_VERSION')
    })

    it('createDirectory leaves one marker `dir/`; listings, stat, writes and removes treat it as the directory', async () => {
      const fs = await open(bucket)
      expect(await fs.createDirectory(await fs.resolve('a/b'))).toEqual({ created: true })
      expect(await keysOf(fs)).toEqual(['a/b/'])
      expect(await fs.createDirectory(await fs.resolve('a/b'))).toEqual({ created: false })
      expect(await fs.createDirectory(await fs.resolve('a'))).toEqual({ created: false })
      expect(await keysOf(fs), 'an existing directory without a marker gets one').toEqual(['a/', 'a/b/'])
      expect((await fs.listDir(await fs.resolve('a'))).map((e) => [e.name, e.type])).toEqual([['b', 'directory']])
      expect(await fs.listDir(await fs.resolve('a/b')), 'the marker is never an entry named ""').toEqual([])
      const info = await fs.stat(await fs.resolve('a/b'))
      expect(info?.type).toBe('directory')
      expect(Math.abs((info?.mtime ?? 0) - Date.now())).toBeLessThan(60_000)
      const file = await fs.resolve('a/b/f.txt')
      await fs.writeText(file, 'f')
      const [entry] = await fs.listDir(await fs.resolve('a/b'))
      expect(entry?.mtime, 'a listing and stat agree on mtime (whole seconds)').toBe((await fs.stat(file))?.mtime)
      await fs.remove(file)
      expect(
        (await fs.listDir(await fs.resolve('a'))).map((e) => e.name),
        'the marker keeps it after its last file',
      ).toEqual(['b'])
      expect(await codeOf(fs.writeText(await fs.resolve('a/b'), 'x')), 'a marker directory is no file').toBe('FS_NOT_REGULAR_FILE')
      expect(await fs.remove(await fs.resolve('a/b'))).toEqual({ type: 'directory', entries: 1 })
      expect(await keysOf(fs)).toEqual(['a/'])
    })

    it('a directory that exists only through its files works as before, and createDirectory gives it a marker', async () => {
      const fs = await open(bucket)
      await fs.writeText(await fs.resolve('implied/x.txt'), 'x')
      await fs.remove(await fs.resolve('implied/x.txt'))
      expect(await fs.stat(await fs.resolve('implied')), 'gone with its last file').toBeUndefined()
      await fs.writeText(await fs.resolve('implied/x.txt'), 'x')
      expect(await fs.createDirectory(await fs.resolve('implied'))).toEqual({ created: false })
      expect(await keysOf(fs)).toEqual(['implied/', 'implied/x.txt'])
      expect(await codeOf(fs.remove(await fs.resolve('implied')))).toBe('FS_NOT_EMPTY')
      expect(await fs.remove(await fs.resolve('implied'), { recursive: true })).toEqual({ type: 'directory', entries: 2 })
      expect(await keysOf(fs)).toEqual([])
    })

    it('a recursive remove counts files and directories (markers add none) and deletes every key below', async () => {
      const fs = await open(bucket)
      await fs.createDirectory(await fs.resolve('t/empty'))
      for (const path of ['t/a.txt', 't/b/c.txt', 't/b/d/e.txt']) await fs.writeText(await fs.resolve(path), path)
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${fs.prefix}t/b/`, Body: '', ContentLength: 0 }))
      // t, t/a.txt, t/b, t/b/c.txt, t/b/d, t/b/d/e.txt, t/empty
      expect(await fs.remove(await fs.resolve('t'), { recursive: true })).toEqual({ type: 'directory', entries: 7 })
      expect(await keysOf(fs)).toEqual([])
    })

    it('rename: exact revision copied, source deleted, outcome version = stat of to; overwrite only when asked', async () => {
      const fs = await open(bucket)
      const a = await fs.resolve('a.txt')
      const b = await fs.resolve('sub/b.txt')
      await fs.writeText(a, 'payload')
      await fs.writeText(b, 'old')
      expect(await codeOf(fs.rename(a, b))).toBe('FS_NOT_OBSERVED')
      const outcome = await fs.rename(a, b, { overwrite: true })
      expect(outcome).toEqual({ type: 'file', replaced: true, version: (await fs.stat(b))?.version })
      expect([await read(fs, 'a.txt'), await read(fs, 'sub/b.txt')]).toEqual([undefined, 'payload'])
      expect(await codeOf(fs.rename(b, await fs.resolve('sub'))), 'a directory at to').toBe('FS_NOT_OBSERVED')
      expect(await codeOf(fs.rename(await fs.resolve('sub'), await fs.resolve('elsewhere'))), 'a directory source').toBe('FS_UNSUPPORTED')
    })

    it(`${RACERS} separate clients rename one version to different names: exactly one wins; opposite renames do not deadlock`, async () => {
      const prefix = freshPrefix('moves')
      const systems = await Promise.all(Array.from({ length: RACERS }, () => open(bucket, { client: rawClient(server!) }, prefix)))
      const [first] = systems as [S3FileSystem]
      const { version } = await first.writeText(await first.resolve('src.txt'), 'payload')
      const codes = await Promise.all(
        systems.map(async (fs, i) => codeOf(fs.rename(await fs.resolve('src.txt'), await fs.resolve(`d${i}.txt`), { expected: { version } }))),
      )
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
      expect(codes.every((c) => c === 'ok' || c === 'FS_STALE_VERSION')).toBe(true)
      expect(await keysOf(first)).toEqual([`d${codes.indexOf('ok')}.txt`])
      await first.writeText(await first.resolve('x.txt'), 'x')
      await first.writeText(await first.resolve('y.txt'), 'y')
      const [x, y] = [await first.resolve('x.txt'), await first.resolve('y.txt')]
      const [, one, two] = systems as [S3FileSystem, S3FileSystem, S3FileSystem]
      expect(await Promise.all([codeOf(one.rename(x, y, { overwrite: true })), codeOf(two.rename(y, x, { overwrite: true }))])).toEqual(['ok', 'ok'])
      // One after the other (the locks are taken in key order): the name left holds its own first content.
      const left = (await first.listDir(await first.resolve('/'))).map((e) => e.name).filter((n) => n !== `d${codes.indexOf('ok')}.txt`)
      expect(left.length).toBe(1)
      expect(await read(first, left[0] ?? '')).toBe(left[0]?.replace('.txt', ''))
      for (const fs of systems.slice(1)) fs.client.destroy()
    })

    it('a source changed by another process between the copy and the delete is kept; a created destination is deleted again', async () => {
      const fs = await open(bucket, { client: rawClient(server!) })
      const [a, b, c] = [await fs.resolve('a.txt'), await fs.resolve('b.txt'), await fs.resolve('c.txt')]
      await fs.probeMoves()
      let interfere: string | undefined
      // After the command named by `interfere` (on a key of the filesystem, not a lock object) answered:
      // another process (the raw client, outside the locks) rewrites the source.
      fs.client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args)
          const key = (args.input as { Key?: string }).Key ?? ''
          if (context.commandName === interfere && key.startsWith(fs.prefix)) {
            interfere = undefined
            await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${fs.prefix}a.txt`, Body: 'changed meanwhile' }))
          }
          return result
        },
        { step: 'deserialize', name: 'interfere' },
      )
      await fs.writeText(a, 'moved')
      // Between the source's HEAD and the copy: the copy's source condition (an ETag, or the VersionId) catches it.
      interfere = 'HeadObjectCommand'
      expect(await codeOf(fs.rename(a, b))).toBe('FS_STALE_VERSION')
      expect([await read(fs, 'a.txt'), await read(fs, 'b.txt')]).toEqual(['changed meanwhile', undefined])
      await fs.writeText(a, 'moved')
      // A no-overwrite rename writes `to` by PUT If-None-Match: * where only PUT enforces it (the unversioned bucket).
      interfere = bucket === server?.bucket ? 'PutObjectCommand' : 'CopyObjectCommand'
      const error = await failure(fs.rename(a, b))
      expect(error === 'ok' ? 'ok' : [error.code, error.message]).toEqual(['FS_STALE_VERSION', expect.stringContaining('the copy was deleted again')])
      expect([await read(fs, 'a.txt'), await read(fs, 'b.txt')]).toEqual(['changed meanwhile', undefined])
      await fs.writeText(a, 'moved')
      await fs.writeText(c, 'replaced')
      interfere = 'CopyObjectCommand'
      const overwritten = await failure(fs.rename(a, c, { overwrite: true }))
      // Unversioned, the file the copy replaced is gone for good: `to` keeps the copy. Versioned, exactly the copy's
      // own version is deleted, and the replaced file comes back.
      const versioned = bucket === server?.versionedBucket
      expect(overwritten === 'ok' ? 'ok' : [overwritten.code, overwritten.message]).toEqual([
        'FS_STALE_VERSION',
        expect.stringContaining(versioned ? 'the copy was deleted again' : 'keeps the copy'),
      ])
      expect([await read(fs, 'a.txt'), await read(fs, 'c.txt')]).toEqual(['changed meanwhile', versioned ? 'replaced' : 'moved'])
      fs.client.destroy()
    })

    it("a copy identical to another writer's is never deleted as one's own (the undo checks the rename's operation id, not the ETag)", async () => {
      const fs = await open(bucket, { client: rawClient(server!) })
      const [a, b] = [await fs.resolve('a.txt'), await fs.resolve('b.txt')]
      await fs.probeMoves()
      let armed = false
      // Right after the rename's copy landed: another writer (outside the locks) writes the same bytes at `to`
      // (same ETag, another object) and removes the source, as a second mover of the same file would.
      fs.client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args)
          const key = (args.input as { Key?: string }).Key ?? ''
          if (armed && ['PutObjectCommand', 'CopyObjectCommand'].includes(context.commandName ?? '') && key === `${fs.prefix}b.txt`) {
            armed = false
            await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'payload' }))
            await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${fs.prefix}a.txt` }))
          }
          return result
        },
        { step: 'deserialize', name: 'second-mover' },
      )
      await fs.writeText(a, 'payload')
      armed = true
      const error = await failure(fs.rename(a, b))
      expect(armed, 'the copy was made').toBe(false)
      // Unversioned: the source is found gone before its DELETE; versioned: the copy's version is looked for first.
      const message = bucket === server?.versionedBucket ? 'another writer wrote it right after the copy' : 'another writer removed or moved the source'
      expect(error === 'ok' ? 'ok' : [error.code, error.message]).toEqual(['FS_STALE_VERSION', expect.stringContaining(message)])
      expect([await read(fs, 'a.txt'), await read(fs, 'b.txt')], "the other writer's file at b.txt is kept").toEqual([undefined, 'payload'])
      fs.client.destroy()
    })

    it('a source with older versions (versioned) or above 64 MiB is gone after its rename; nothing older surfaces', async () => {
      const fs = await open(bucket)
      const a = await fs.resolve('a.txt')
      await fs.writeText(a, 'old')
      await fs.writeText(a, 'new')
      expect(await fs.rename(a, await fs.resolve('b.txt'))).toMatchObject({ type: 'file', replaced: false })
      expect([await read(fs, 'a.txt'), await read(fs, 'b.txt')]).toEqual([undefined, 'new'])
      // Above MAX_PUT_RENAME_BYTES a no-overwrite rename is a CopyObject (under the process lock) in both buckets.
      const big = Buffer.alloc(64 * 1024 ** 2 + 1, 'x')
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${fs.prefix}big.bin`, Body: big, ContentLength: big.byteLength }))
      const sent: string[] = []
      const own = rawClient(server!)
      own.middlewareStack.add((next, context) => async (args) => (sent.push(context.commandName ?? ''), next(args)), { step: 'initialize', name: 'sent' })
      const watched = await open(bucket, { client: own }, fs.prefix)
      expect(await watched.rename(await watched.resolve('big.bin'), await watched.resolve('moved.bin'))).toMatchObject({ replaced: false })
      expect(sent).toContain('CopyObjectCommand')
      expect(sent).not.toContain('GetObjectCommand')
      expect(await keysOf(fs)).toEqual(['b.txt', 'moved.bin'])
      own.destroy()
    }, 60_000)

    it('requireAtomicGuards: a guarded remove and every rename are FS_UNSUPPORTED (radosgw enforces no DELETE condition)', async () => {
      const fs = await open(bucket, { requireAtomicGuards: true })
      const t = await fs.resolve('f.txt')
      const { version } = await fs.writeText(t, 'f')
      expect(await codeOf(fs.remove(t, { expected: { version } }))).toBe('FS_UNSUPPORTED')
      expect(await codeOf(fs.rename(t, await fs.resolve('g.txt')))).toBe('FS_UNSUPPORTED')
      expect(await fs.remove(t)).toEqual({ type: 'file', entries: 1 })
      const head = client.send(new HeadObjectCommand({ Bucket: bucket, Key: `${fs.prefix}f.txt` }))
      expect(
        await head.then(
          () => 'there',
          () => 'gone',
        ),
      ).toBe('gone')
    })
  })
})
