/**
 * Deadlines and honest outcomes on S3, against the real radosgw through a TCP
 * proxy on 127.0.0.1 that can freeze (hold every byte, sockets open) or cut connections.
 * - a frozen server: a call with a signal ends at the abort (a write's failure says whether it may
 *   have landed), a call without one at the idle deadline, and the instance works after the thaw;
 * - connections cut at random points during 40 writes: every definite failure left the key as it
 *   was, every success landed; only an indeterminate failure may have gone either way.
 * The bounds in ms are the acceptance criteria of deadlines; nothing else is timed.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { isFsError, type FsError, type FsTarget, type FsVersion } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { S3_ERROR_TABLE, toFsError } from '../src/errors.js'
import { clientConfig } from '../src/setup.js'
import { createFileToolsByName, DEFAULT_CONFIG, ObservationPolicy } from '@seamfs/tools'
import { CuttingProxy } from './proxy.js'
import { freshPrefix, purge, rawClient, server, serverWhy, failure } from './support.js'

/** `operation`'s failure and how long it took to fail, in ms. */
async function timedFailure(operation: () => Promise<unknown>): Promise<{ err: FsError; ms: number }> {
  const started = performance.now()
  const err = await failure(operation())
  return { err, ms: performance.now() - started }
}

describe('request options', () => {
  const bucket = 'b'
  it('idleTimeoutMs, connectTimeoutMs and maxAttempts must be positive integers (RangeError, like every option)', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(() => new S3FileSystem({ bucket, idleTimeoutMs: bad })).toThrow(RangeError)
      expect(() => new S3FileSystem({ bucket, connectTimeoutMs: bad })).toThrow(RangeError)
      expect(() => new S3FileSystem({ bucket, maxAttempts: bad })).toThrow(RangeError)
    }
  })

  it('a built client gets the deadlines (defaults 30 s idle, 5 s to connect) and maxAttempts only when given', () => {
    expect(clientConfig({ bucket }).requestHandler).toEqual({ socketTimeout: 30_000, connectionTimeout: 5_000 })
    expect(clientConfig({ bucket }).maxAttempts).toBeUndefined()
    const config = clientConfig({ bucket, idleTimeoutMs: 1500, connectTimeoutMs: 700, maxAttempts: 1 })
    expect([config.requestHandler, config.maxAttempts]).toEqual([{ socketTimeout: 1500, connectionTimeout: 700 }, 1])
  })

  it('lostAnswer marks the failures that may come after the request went out, not those before it', () => {
    const lost = ['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'TimeoutError', 'ERR_STREAM_PREMATURE_CLOSE', '504']
    const before = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'RequestTimeout', '503']
    for (const key of lost) expect(S3_ERROR_TABLE[key]?.lostAnswer, key).toBe(true)
    for (const key of before) expect(S3_ERROR_TABLE[key]?.lostAnswer, key).toBeUndefined()
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
    expect(toFsError(reset, 'write', '/a').indeterminate).toBe(true)
    expect(toFsError(reset, 'read', '/a').indeterminate).toBe(false)
    expect(toFsError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 'write', '/a').indeterminate).toBe(false)
    // An unknown system error without an answer may have had the request in flight; a body cut after a 200 too.
    expect(toFsError(Object.assign(new Error('x'), { code: 'EWHATEVER' }), 'write', '/a').indeterminate).toBe(true)
    expect(toFsError(Object.assign(new Error('cut'), { name: 'Error', $metadata: { httpStatusCode: 200 } }), 'rename', '/a').indeterminate).toBe(true)
  })
})

describe.skipIf(server === null)(`S3FileSystem when the server stops answering${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let proxy: CuttingProxy
  let direct: S3Client
  const bucket = server?.bucket ?? ''
  const opened: S3FileSystem[] = []

  beforeAll(async () => {
    if (server === null) return
    proxy = await CuttingProxy.start(Number(new URL(server.endpoint).port))
    direct = rawClient(server)
  })
  afterAll(async () => {
    direct?.destroy()
    await proxy?.close()
  })
  afterEach(async () => {
    proxy.thaw()
    proxy.disarm()
    for (const fs of opened.splice(0)) {
      await fs.close()
      await purge(direct, bucket, fs.prefix)
    }
  })

  /** A filesystem through the proxy, with a client it builds itself (so the deadlines are its own). */
  const open = async (extra: Partial<S3FileSystemOptions>): Promise<S3FileSystem> => {
    const info = server!
    const fs = await S3FileSystem.open({
      bucket,
      prefix: freshPrefix('timeouts'),
      endpoint: proxy.endpoint,
      region: info.region,
      credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey },
      forcePathStyle: true,
      ...extra,
    })
    opened.push(fs)
    return fs
  }

  /** The object at `path` read straight from the server (not through the proxy), or undefined. */
  const stored = async (fs: S3FileSystem, path: string): Promise<string | undefined> => {
    try {
      const out = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: fs.prefix + path }))
      return (await out.Body?.transformToString('utf-8')) ?? ''
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined
      throw err
    }
  }

  /** Targets resolved while the server answers (resolve may ask it). */
  const targets = async (fs: S3FileSystem): Promise<{ file: FsTarget; root: FsTarget }> => {
    const file = await fs.resolve('a.txt')
    await fs.writeText(file, 'before')
    return { file, root: await fs.resolve('/') }
  }

  it('frozen: readText, stat, listDir and writeText with a 2 s signal are FS_ABORTED within 2.5 s; the write says whether it may have landed', async () => {
    const fs = await open({ idleTimeoutMs: 10_000 })
    const { file, root } = await targets(fs)
    proxy.freeze()
    const calls: Record<string, (signal: AbortSignal) => Promise<unknown>> = {
      readText: (signal) => fs.readText(file, { signal }),
      stat: (signal) => fs.stat(file, { signal }),
      listDir: (signal) => fs.listDir(root, { signal }),
      writeText: (signal) => fs.writeText(file, 'after', { signal }),
    }
    const results = await Promise.all(
      Object.entries(calls).map(async ([name, call]) => ({ name, ...(await timedFailure(() => call(AbortSignal.timeout(2000)))) })),
    )
    proxy.thaw()
    for (const { name, err, ms } of results) {
      expect([name, err.code], err.message).toEqual([name, 'FS_ABORTED'])
      expect(ms, name).toBeLessThanOrEqual(2500)
      if (name !== 'writeText') expect(err.indeterminate, name).toBe(false)
    }
    const write = results.find((r) => r.name === 'writeText')!.err
    // Not flagged: the write did not happen. Flagged: it may have (its request may have gone out), or not.
    expect(write.indeterminate ? ['before', 'after'] : ['before']).toContain(await stored(fs, 'a.txt'))
    // After the thaw the same instance works again (the write waits for the lock the aborted one may still hold).
    await fs.writeText(file, 'thawed')
    expect(await fs.readText(file)).toBe('thawed')
    expect((await fs.listDir(root)).map((e) => e.name)).toEqual(['a.txt'])
  })

  it('frozen, no signal: each call fails at the idle deadline with a retryable FS_IO_ERROR saying so; after the thaw the instance works', async () => {
    const idleTimeoutMs = 1500
    // One attempt per request: the SDK's retries would multiply the wait (see the next test).
    const fs = await open({ idleTimeoutMs, maxAttempts: 1 })
    const { file, root } = await targets(fs)
    proxy.freeze()
    const [read, stat, list, write] = await Promise.all([
      timedFailure(() => fs.readText(file)),
      timedFailure(() => fs.stat(file)),
      timedFailure(() => fs.listDir(root)),
      // A write makes two requests before its PUT (its lock object's PUT, then a GET of it), each given the deadline.
      timedFailure(() => fs.writeText(file, 'after')),
    ])
    proxy.thaw()
    for (const [name, { err, ms }] of Object.entries({ read, stat, list })) {
      expect([name, err.code, err.retryable, err.indeterminate], err.message).toEqual([name, 'FS_IO_ERROR', true, false])
      expect(err.message).toContain(`timed out after ${idleTimeoutMs} ms`)
      expect(ms, name).toBeLessThan(idleTimeoutMs + 3000)
    }
    expect([write.err.code, write.err.retryable], write.err.message).toEqual(['FS_IO_ERROR', true])
    expect(write.err.message).toContain(`timed out after ${idleTimeoutMs} ms`)
    expect(write.ms).toBeLessThan(2 * idleTimeoutMs + 3000)
    expect(write.err.indeterminate ? ['before', 'after'] : ['before']).toContain(await stored(fs, 'a.txt'))
    await fs.writeText(file, 'thawed')
    expect(await fs.readText(file)).toBe('thawed')
  })

  it('frozen, through the tools with their default deadline: read and edit end with a retryable FS_IO_ERROR within 30 s, the edit flagged indeterminate', async () => {
    // The backend's own defaults too (30 s idle, 3 attempts): the tools' deadline is what ends the call.
    const fs = await open({})
    await fs.writeText(await fs.resolve('a.txt'), 'alpha\n')
    const tools = createFileToolsByName({ fs, policy: new ObservationPolicy(), sandbox: false })
    expect(DEFAULT_CONFIG.callTimeoutMs).toBe(30_000)
    expect((await tools.read.execute({ file_path: '/a.txt' })).isError).toBe(false)
    proxy.freeze()
    const started = performance.now()
    const [read, edit] = await Promise.all([
      tools.read.execute({ file_path: '/a.txt' }),
      tools.edit.execute({ file_path: '/a.txt', old_string: 'alpha', new_string: 'beta' }),
    ])
    const ms = performance.now() - started
    proxy.thaw()
    expect(read).toMatchObject({ isError: true, code: 'FS_IO_ERROR', retryable: true })
    expect(read.text).toMatch(/^Error: timed out after 30 s: the store did not answer/)
    expect(edit).toMatchObject({ isError: true, code: 'FS_IO_ERROR', retryable: true, indeterminate: true })
    expect(edit.text).toMatch(/read the file \(or list the directory\) before retrying$/)
    // Within the deadline, give or take the timer's turn (the deadline is 30 s; the backend alone would wait 90 s and more).
    expect(ms).toBeLessThan(30_000 + 2500)
    // The same tools work once the server answers.
    const after = await tools.read.execute({ file_path: '/a.txt' })
    expect(after.isError, after.text).toBe(false)
    expect(after.text).toMatch(/1: (alpha|beta)/)
  }, 60_000)

  it('reads are retried by the SDK: after each idle timeout (3 attempts) and after a connection reset (then they succeed)', async () => {
    const idleTimeoutMs = 1000
    const fs = await open({ idleTimeoutMs })
    const { file } = await targets(fs)
    proxy.freeze()
    const { err, ms } = await timedFailure(() => fs.readText(file))
    proxy.thaw()
    expect([err.code, err.retryable, (err.cause as { $metadata?: { attempts?: number } }).$metadata?.attempts]).toEqual(['FS_IO_ERROR', true, 3])
    // Three attempts, each given the idle deadline, and the backoff between them (at most 50 and 100 ms).
    expect(ms).toBeLessThan(3 * idleTimeoutMs + 3000)
    const cuts = proxy.cuts
    proxy.arm({ direction: 'down', method: 'GET', afterBytes: 0, times: 1 })
    expect(await fs.readText(file)).toBe('before')
    expect(proxy.cuts - cuts).toBe(1)
  })

  it('remove, rename and createDirectory whose answer is lost: one that landed succeeds, one that did not fails definitely', async () => {
    // One attempt per request: every cut is the request's outcome, none is hidden by a retry.
    const client = rawClient(server!, { endpoint: proxy.endpoint, maxAttempts: 1, requestHandler: { socketTimeout: 5000 } })
    const fs = await S3FileSystem.open({ client, bucket, prefix: freshPrefix('timeouts') })
    opened.push(fs)
    try {
      await fs.probeMoves()
      const put = async (name: string): Promise<FsTarget> => {
        const target = await fs.resolve(name)
        await fs.writeText(target, name)
        return target
      }
      const [a, b, c] = [await put('a.txt'), await put('b.txt'), await put('c.txt')]
      // Cut after the server applied it (its answer lost), or in the middle of the request line (never applied).
      const landed = (method: string): void => proxy.arm({ direction: 'down', method, afterBytes: 0, times: 1 })
      const stopped = (method: string): void => proxy.arm({ direction: 'up', method, afterBytes: 10, times: 1 })
      const cuts = proxy.cuts
      landed('DELETE')
      expect(await fs.remove(a)).toMatchObject({ type: 'file' })
      expect(await stored(fs, 'a.txt')).toBeUndefined()
      stopped('DELETE')
      const kept = await failure(fs.remove(b))
      expect([kept.code, kept.retryable, kept.indeterminate], kept.message).toEqual(['FS_IO_ERROR', true, false])
      expect(await stored(fs, 'b.txt')).toBe('b.txt')
      // The rename's DELETE of its source is cut after it applied: the rename is done.
      landed('DELETE')
      expect(await fs.rename(c, await fs.resolve('d.txt'))).toMatchObject({ type: 'file', replaced: false })
      expect([await stored(fs, 'c.txt'), await stored(fs, 'd.txt')]).toEqual([undefined, 'c.txt'])
      landed('PUT')
      expect(await fs.createDirectory(await fs.resolve('made'))).toEqual({ created: true })
      expect(await stored(fs, 'made/')).toBe('')
      stopped('PUT')
      const missing = await failure(fs.createDirectory(await fs.resolve('unmade')))
      expect([missing.code, missing.retryable, missing.indeterminate], missing.message).toEqual(['FS_IO_ERROR', true, false])
      expect(await stored(fs, 'unmade/')).toBeUndefined()
      expect(proxy.cuts - cuts).toBe(5)
    } finally {
      proxy.disarm()
      client.destroy()
    }
  })

  it('40 writes while connections are cut at random points: a definite failure never landed, a success did; only an indeterminate one may be either', async () => {
    // Half the writes retried by the SDK (a retry may meet its own earlier attempt), half not (every cut counts).
    const fs = await open({ idleTimeoutMs: 5000 })
    const onceClient = rawClient(server!, { endpoint: proxy.endpoint, maxAttempts: 1, requestHandler: { socketTimeout: 5000 } })
    const once = await S3FileSystem.open({ client: onceClient, bucket, prefix: fs.prefix })
    const N = 40
    const kinds = ['create', 'createIfAbsent', 'overwrite', 'replaceIfVersion'] as const
    const plans = Array.from({ length: N }, (_, i) => {
      const kind = kinds[i % kinds.length]!
      const fresh = kind === 'create' || kind === 'createIfAbsent'
      const by = Math.floor(i / kinds.length) % 2 === 0 ? fs : once
      return {
        i,
        kind,
        by,
        name: `${fresh ? 'new' : 'old'}-${i}.txt`,
        previous: fresh ? undefined : `old ${i}\n`,
        content: `write ${i}\n${'x'.repeat(500 + 97 * i)}`,
      }
    })
    const versions = new Map<number, FsVersion>()
    for (const p of plans) {
      if (p.previous !== undefined) versions.set(p.i, (await fs.writeText(await fs.resolve(p.name), p.previous)).version)
    }
    const resolved = await Promise.all(plans.map((p) => fs.resolve(p.name)))
    // Any request: the files' PUTs (under the prefix), the HEADs, GETs and LISTs around them, their lock
    // objects' PUTs, GETs and DELETEs (at the bucket root). A cut up lets through a random part of the
    // request (headers about 1 KB, then the body); a cut down, none of the answer.
    proxy.armRandom({ chance: 0.3, maxUpBytes: 4000 })
    const cutsBefore = proxy.log.length
    const outcomes: ('ok' | FsError)[] = new Array<'ok' | FsError>(N)
    let next = 0
    const worker = async (): Promise<void> => {
      for (let at = next++; at < N; at = next++) {
        const p = plans[at]!
        const target = resolved[at]!
        const version = versions.get(p.i)
        const write =
          p.kind === 'createIfAbsent'
            ? p.by.writeText(target, p.content, { expected: { kind: 'createIfAbsent' } })
            : p.kind === 'replaceIfVersion' && version !== undefined
              ? p.by.writeText(target, p.content, { expected: { kind: 'replaceIfVersion', version }, before: false })
              : p.by.writeText(target, p.content)
        outcomes[at] = await write.then(
          () => 'ok' as const,
          (err: unknown) => {
            if (isFsError(err)) return err
            throw new Error(`a raw error escaped: ${String(err)}`, { cause: err })
          },
        )
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    proxy.disarm()
    await once.close()
    onceClient.destroy()
    const fileCuts = proxy.log.slice(cutsBefore).filter((cut) => cut.method === 'PUT' && cut.target.includes(fs.prefix))
    expect(fileCuts.length, 'at least one PUT of a file was cut in flight').toBeGreaterThan(0)
    const tally = { ok: 0, definite: 0, indeterminate: 0 }
    for (const p of plans) {
      const outcome = outcomes[p.i]!
      const now = await stored(fs, p.name)
      const label = `${p.kind} ${p.name}: ${outcome === 'ok' ? 'ok' : `${outcome.code} ${outcome.indeterminate ? '(indeterminate) ' : ''}${outcome.message}`}`
      if (outcome === 'ok') {
        tally.ok++
        expect(now === p.content, label).toBe(true)
      } else if (outcome.indeterminate) {
        tally.indeterminate++
        expect(now === p.content || now === p.previous, label).toBe(true)
      } else {
        tally.definite++
        expect(now === p.previous, label).toBe(true)
      }
      // A lost race is impossible (one writer per key): every failure is the network's.
      if (outcome !== 'ok') expect([outcome.code, outcome.retryable], label).toEqual(['FS_IO_ERROR', true])
    }
    expect(tally.ok + tally.definite + tally.indeterminate).toBe(N)
  }, 60_000)
})
