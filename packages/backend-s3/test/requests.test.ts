/**
 * Request counts, measured by a middleware on the SDK client that counts every HTTP attempt
 * by command. Targets: read = 1 GET (resolve in a directory it checked
 * costs nothing), write = 1 PUT (plus the checks a create needs; a replace without `before`
 * is the PUT alone), edit = 1 GET + 1 PUT, listing n keys = ⌈n / page size⌉ LISTs; where lock
 * objects are used (this bucket), every write, edit, remove and rename adds 1 PUT + 1 DELETE per key.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { S3FileSystem } from '@seamfs/backend-s3'
import { isFsError, ObservationPolicy, type FsVersion } from '@seamfs/core'
import { createFileToolsByName, type ToolResult } from '@seamfs/tools'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const LISTED = 2_500

/**
 * `expected` plus what `locks` lock objects add (the unversioned bucket on radosgw has them, see
 * `leases.ts`): per key, PUT `If-None-Match: *` before the operation and DELETE after it.
 */
function withLocks(expected: string, locks = 1): string {
  const counts = new Map(expected === '' ? [] : expected.split(', ').map((part) => [part.split(' ')[0] ?? '', Number(part.split(' ')[1])] as const))
  for (const name of ['PUT', 'DELETE']) counts.set(name, (counts.get(name) ?? 0) + locks)
  return [...counts.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([name, n]) => `${name} ${n}`)
    .join(', ')
}

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: unknown) => (isFsError(err) ? err.code : `raw: ${String(err)}`),
  )
const short: Record<string, string> = {
  HeadObjectCommand: 'HEAD',
  GetObjectCommand: 'GET',
  PutObjectCommand: 'PUT',
  ListObjectsV2Command: 'LIST',
  ListObjectVersionsCommand: 'LIST-VERSIONS',
  DeleteObjectCommand: 'DELETE',
  DeleteObjectsCommand: 'DELETE-OBJECTS',
  CopyObjectCommand: 'COPY',
}

describe.skipIf(server === null)(`S3FileSystem request counts${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  const bucket = server?.bucket ?? ''
  const prefix = freshPrefix('requests')
  const counts = new Map<string, number>()
  const rows: [string, string, string][] = []
  let client: S3Client

  /** The filesystems measured: a write's lock object is released behind its answer, and counted with it. */
  const opened: S3FileSystem[] = []
  const track = (fs: S3FileSystem): S3FileSystem => (opened.push(fs), fs)

  /** Runs `fn` and returns the requests it made (those of the lock objects it released after answering too), e.g. `GET 1, PUT 1`. */
  async function measure(fn: () => Promise<unknown>): Promise<string> {
    for (const fs of opened) await fs.settle()
    counts.clear()
    await fn()
    for (const fs of opened) await fs.settle()
    return [...counts.entries()]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')
  }

  async function row(operation: string, expected: string, fn: () => Promise<unknown>): Promise<void> {
    const measured = await measure(fn)
    rows.push([operation, measured, expected])
    expect(measured, operation).toBe(expected)
  }

  beforeAll(() => {
    if (server === null) return
    client = rawClient(server)
    // Deserialize-step middleware runs once per HTTP attempt (inside the SDK's retries).
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = short[context.commandName ?? ''] ?? context.commandName ?? '?'
        counts.set(name, (counts.get(name) ?? 0) + 1)
        return next(args)
      },
      { step: 'deserialize', name: 'countRequests' },
    )
  })
  afterAll(async () => {
    if (server === null) return
    await purge(client, bucket, prefix)
    client.destroy()
    if (rows.length > 0) {
      const width = Math.max(...rows.map((r) => r[0].length))
      console.log(
        [`requests per operation (radosgw, unversioned bucket, atomic guards, lock objects)`, `${'operation'.padEnd(width)}  measured`]
          .concat(rows.map(([op, measured]) => `${op.padEnd(width)}  ${measured}`))
          .join('\n'),
      )
    }
  })

  it('every operation makes the documented requests, and no more', async () => {
    let fs!: S3FileSystem
    // + 1 PUT and 1 DELETE of a scratch lock object: can lock objects be made here?
    await row('open (capability probe)', 'DELETE 2, LIST-VERSIONS 1, PUT 6', async () => {
      fs = track(await S3FileSystem.open({ client, bucket, prefix }))
    })
    const file = await fs.resolve('f.txt')
    await row('resolve a/b/c.txt (HEAD per ancestor)', 'HEAD 2', () => fs.resolve('a/b/c.txt'))
    // resolve remembers that no file lies on the path to a/b (resolveCacheMs): another path there costs nothing.
    await row('resolve a/b/d.txt (a/b checked before)', '', () => fs.resolve('a/b/d.txt'))
    await row('resolve f.txt (top level)', '', () => fs.resolve('f.txt'))
    // A new file: GET (the before; 404) or HEAD, then the checks (a directory there? a file on the path?), then PUT.
    await row('writeText, new file', withLocks('GET 1, LIST 1, PUT 1'), () => fs.writeText(file, 'one\n'))
    await row('writeText, existing file', withLocks('GET 1, PUT 1'), () => fs.writeText(file, 'two\n'))
    await row('writeText, existing file, before: false', withLocks('HEAD 1, PUT 1'), () => fs.writeText(file, 'two and a half\n', { before: false }))
    await row('writeText, new file, before: false', withLocks('HEAD 1, LIST 1, PUT 1'), async () =>
      fs.writeText(await fs.resolve('nb.txt'), 'nb', { before: false }),
    )
    const { version } = await fs.writeText(file, 'three\n')
    const replace = (v: FsVersion) => ({ expected: { kind: 'replaceIfVersion', version: v } }) as const
    await row('writeText replaceIfVersion', withLocks('GET 1, PUT 1'), () => fs.writeText(file, 'four\n', replace(version)))
    // Without before: the server checks the version (If-Match), nothing is read first.
    const { version: v5 } = await fs.writeText(file, 'five\n', { ...replace((await fs.stat(file))?.version ?? version), before: false })
    await row('writeText replaceIfVersion, before: false', withLocks('PUT 1'), () => fs.writeText(file, 'four\n', { ...replace(v5), before: false }))
    await row('writeText replaceIfVersion, before: false, stale (refused, then HEAD)', withLocks('HEAD 1, PUT 1'), async () => {
      expect(await codeOf(fs.writeText(file, 'x', { ...replace(v5), before: false }))).toBe('FS_STALE_VERSION')
    })
    await row('writeText createIfAbsent', withLocks('LIST 1, PUT 1'), async () =>
      fs.writeText(await fs.resolve('g.txt'), 'g', { expected: { kind: 'createIfAbsent' } }),
    )
    // Under a parent: one HEAD per ancestor (did it become a file since resolve?), sent together with the LIST.
    const [h, i] = [await fs.resolve('n/m/h.txt'), await fs.resolve('n/m/i.txt')]
    await row('writeText, new file n/m/h.txt', withLocks('GET 1, HEAD 2, LIST 1, PUT 1'), () => fs.writeText(h, 'h'))
    await row('writeText createIfAbsent n/m/i.txt', withLocks('HEAD 2, LIST 1, PUT 1'), () => fs.writeText(i, 'i', { expected: { kind: 'createIfAbsent' } }))
    await row('read (resolve + readText), n/m checked before', 'GET 1', async () => fs.readText(await fs.resolve('n/m/h.txt')))
    await row('read (stat + readText)', 'GET 1, HEAD 1', async () => {
      await fs.stat(file)
      await fs.readText(file)
    })
    await row('streamText', 'GET 1', async () => {
      for await (const chunk of await fs.streamText(file)) void chunk
    })
    await row('editText', withLocks('GET 1, PUT 1'), () => fs.editText(file, { oldString: 'four', newString: 'five', replaceAll: false }))
    const current = (await fs.stat(file))?.version
    await row('editText guarded', withLocks('GET 1, PUT 1'), () =>
      fs.editText(file, { oldString: 'five', newString: 'six', replaceAll: false }, { expected: { version: current ?? version } }),
    )
    await row('edit (resolve + editText), n/m checked before', withLocks('GET 1, PUT 1'), async () =>
      fs.editText(await fs.resolve('n/m/h.txt'), { oldString: 'h', newString: 'hh', replaceAll: false }),
    )
    const dir = await fs.resolve('d')
    await fs.writeText(await fs.resolve('d/x.txt'), 'x')
    await row('stat of a file', 'HEAD 1', () => fs.stat(file))
    await row('stat of a directory', 'HEAD 1, LIST 1', () => fs.stat(dir))
  })

  it('remove, rename and createDirectory make the documented requests, and no more', async () => {
    const fs = track(await S3FileSystem.open({ client, bucket, prefix: `${prefix}moves/` }))
    await row('probeMoves (first remove or rename)', 'COPY 5, DELETE 3, LIST-VERSIONS 2, PUT 1', () => fs.probeMoves())
    const file = await fs.resolve('f.txt')
    await fs.writeText(file, 'f')
    await fs.resolve('r/s.txt')
    await row('remove a file', withLocks('DELETE 1, HEAD 1'), () => fs.remove(file))
    // A remove may make a directory vanish: resolve checks again afterwards.
    await row('resolve r/t.txt after a remove (resolve forgot r)', 'HEAD 1', () => fs.resolve('r/t.txt'))
    const { version } = await fs.writeText(file, 'f')
    await row('remove a file, guarded (under the lock: HEAD, check, DELETE)', withLocks('DELETE 1, HEAD 1'), () => fs.remove(file, { expected: { version } }))
    const dir = await fs.resolve('d')
    await row('createDirectory d', 'HEAD 1, LIST 1, PUT 1', () => fs.createDirectory(dir))
    await row('createDirectory d again', 'HEAD 1, LIST 1', () => fs.createDirectory(dir))
    const deep = await fs.resolve('n/m/d')
    // Is a parent a file? One HEAD per ancestor (as resolve), with the HEAD of the path and the LIST.
    await row('createDirectory n/m/d', 'HEAD 3, LIST 1, PUT 1', () => fs.createDirectory(deep))
    await row('remove an empty directory (its marker)', withLocks('DELETE 1, HEAD 1, LIST 1'), () => fs.remove(dir))
    for (let i = 0; i < 30; i++) await fs.writeText(await fs.resolve(`tree/${i % 3}/f${i}.txt`), 'x')
    const tree = await fs.resolve('tree')
    await row('remove a tree of 30 files, recursive', withLocks('DELETE-OBJECTS 1, HEAD 1, LIST 1'), () => fs.remove(tree, { recursive: true }))
    await fs.writeText(file, 'f')
    const moved = await fs.resolve('g.txt')
    // HEAD source, HEAD + LIST of the destination, GET source + PUT If-None-Match: * (no overwrite: radosgw ignores it on CopyObject),
    // HEAD source again (the version check before the DELETE), DELETE.
    await row('rename f.txt → g.txt', withLocks('DELETE 1, GET 1, HEAD 3, LIST 1, PUT 1', 2), () => fs.rename(file, moved))
    const below = await fs.resolve('n/m/h.txt')
    await row('rename g.txt → n/m/h.txt (+1 HEAD per ancestor of to)', withLocks('DELETE 1, GET 1, HEAD 5, LIST 1, PUT 1', 2), () => fs.rename(moved, below))
    await fs.writeText(file, 'f')
    // overwrite: true needs no destination condition: one CopyObject.
    await row('rename f.txt → n/m/h.txt, overwrite', withLocks('COPY 1, DELETE 1, HEAD 5, LIST 1', 2), () => fs.rename(file, below, { overwrite: true }))

    // Versioned bucket: + HEAD of `to` (radosgw's copy answer has no VersionId); LIST-VERSIONS (is V current, what lies below?), DELETE of V by VersionId, HEAD.
    const versioned = track(await S3FileSystem.open({ client, bucket: server!.versionedBucket, prefix: `${prefix}versioned/` }))
    await versioned.probeMoves()
    const v = await versioned.resolve('v.txt')
    await versioned.writeText(v, 'v')
    await row('rename v.txt → w.txt, versioned bucket', 'COPY 1, DELETE 1, HEAD 4, LIST 1, LIST-VERSIONS 1', async () =>
      versioned.rename(v, await versioned.resolve('w.txt')),
    )
    // Versioned bucket ('process' guards on radosgw, no lock objects): HEAD, compare under the lock, PUT; still no GET without before.
    const { version: vv } = await versioned.writeText(v, 'v2')
    await row('writeText replaceIfVersion, before: false, versioned bucket', 'HEAD 1, PUT 1', () =>
      versioned.writeText(v, 'v3', { expected: { kind: 'replaceIfVersion', version: vv }, before: false }),
    )
    await purge(client, server!.versionedBucket, versioned.prefix)
  })

  it('tool calls (fence, read-before-write policy): read 1 GET; a new file LIST + PUT; an overwrite or an edit after a read GET + PUT; each 1 round trip, or 2 with its lock object taken alongside', async () => {
    // Requests that start together (within a few ms: signing, the event loop) overlap by far at this delay.
    const DELAY_MS = 40
    const spans: { readonly name: string; readonly start: number; end: number }[] = []
    const slow = rawClient(server!)
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        const span = { name: short[context.commandName ?? ''] ?? context.commandName ?? '?', start: performance.now(), end: Number.POSITIVE_INFINITY }
        spans.push(span)
        counts.set(span.name, (counts.get(span.name) ?? 0) + 1)
        await new Promise((resolve) => setTimeout(resolve, DELAY_MS))
        try {
          return await next(args)
        } finally {
          span.end = performance.now()
        }
      },
      { step: 'deserialize', name: 'spans' },
    )
    const fs = track(await S3FileSystem.open({ client: slow, bucket, prefix: `${prefix}tools/` }))
    for (const name of ['r.txt', 'o.txt', 'e.txt']) await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}tools/${name}`, Body: 'MARK-A\n' }))
    const tools = createFileToolsByName({ fs, policy: new ObservationPolicy() })
    /** The requests of `call` (those of the lock object it releases behind its answer too) and the round trips it waited for: the longest chain of requests each sent after the answer of one before. */
    const measureCall = async (call: () => Promise<ToolResult>): Promise<{ requests: string; roundTrips: number }> => {
      await fs.settle()
      spans.length = 0
      let done = 0
      const requests = await measure(async () => {
        const result = await call()
        done = performance.now()
        if (result.isError) throw new Error(result.text)
      })
      const depth = new Map<(typeof spans)[number], number>()
      for (const span of [...spans].sort((a, b) => a.start - b.start)) {
        depth.set(span, 1 + Math.max(0, ...spans.filter((o) => o.end <= span.start).map((o) => depth.get(o) ?? 0)))
      }
      return { requests, roundTrips: Math.max(0, ...spans.filter((o) => o.end <= done).map((o) => depth.get(o) ?? 0)) }
    }
    await measureCall(() => tools.read.execute({ file_path: 'r.txt' })) // pins the fence's root
    const read = await measureCall(() => tools.read.execute({ file_path: 'r.txt' }))
    const write = await measureCall(() => tools.write.execute({ file_path: 'new.txt', content: 'new\n' }))
    await tools.read.execute({ file_path: 'o.txt' })
    const overwrite = await measureCall(() => tools.write.execute({ file_path: 'o.txt', content: 'over\n' }))
    await tools.read.execute({ file_path: 'e.txt' })
    const edit = await measureCall(() => tools.edit.execute({ file_path: 'e.txt', old_string: 'MARK-A', new_string: 'MARK-B' }))
    for (const [call, m] of Object.entries({ read, write, overwrite, edit })) rows.push([`tool: ${call}`, `${m.requests} (${m.roundTrips} RT)`, ''])
    expect(read).toEqual({ requests: 'GET 1', roundTrips: 1 })
    // Lock objects (this bucket): their PUT goes with the write's first requests, their DELETE after its answer.
    expect(write).toEqual({ requests: withLocks('LIST 1, PUT 1'), roundTrips: 2 })
    expect(overwrite).toEqual({ requests: withLocks('GET 1, PUT 1'), roundTrips: 2 })
    expect(edit).toEqual({ requests: withLocks('GET 1, PUT 1'), roundTrips: 2 })
    slow.destroy()
  }, 60_000)

  it(`listing ${LISTED} keys takes ⌈n / page size⌉ LISTs`, async () => {
    const many = `${prefix}many/`
    const names = Array.from({ length: LISTED }, (_, i) => `k${String(i).padStart(4, '0')}`)
    for (let i = 0; i < names.length; i += 100) {
      await Promise.all(names.slice(i, i + 100).map((n) => client.send(new PutObjectCommand({ Bucket: bucket, Key: many + n, Body: n }))))
    }
    for (const pageSize of [1000, 250, 100]) {
      const fs = new S3FileSystem({ client, bucket, prefix, pageSize })
      const target = await fs.resolve('many')
      let listed = 0
      await row(`listDir of ${LISTED} keys, pageSize ${pageSize}`, `LIST ${Math.ceil(LISTED / pageSize)}`, async () => {
        listed = (await fs.listDir(target)).length
      })
      expect(listed).toBe(LISTED)
    }
  }, 120_000)
})
