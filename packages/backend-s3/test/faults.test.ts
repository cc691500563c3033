/**
 * Fault injection: a TCP proxy on 127.0.0.1 between the client and radosgw cuts connections
 * in the middle of an upload or a download. Each failure must be a clean, retryable
 * FS_IO_ERROR, the stored object must be intact, and the next call must succeed.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { S3FileSystem } from '@seamfs/backend-s3'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CuttingProxy } from './proxy.js'
import { freshPrefix, purge, rawClient, server, serverWhy, failure } from './support.js'

const MiB = 1024 * 1024

describe.skipIf(server === null)(`S3FileSystem under connection cuts${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  let proxy: CuttingProxy
  let direct: S3Client
  let viaProxy: S3Client
  let fs: S3FileSystem
  const bucket = server?.bucket ?? ''

  beforeAll(async () => {
    if (server === null) return
    proxy = await CuttingProxy.start(Number(new URL(server.endpoint).port))
    direct = rawClient(server)
    viaProxy = rawClient(server, { endpoint: proxy.endpoint })
  })
  afterAll(async () => {
    viaProxy?.destroy()
    direct?.destroy()
    await proxy?.close()
  })
  beforeEach(async () => {
    proxy.disarm()
    fs = await S3FileSystem.open({ client: viaProxy, bucket, prefix: freshPrefix('faults') })
    return async () => {
      proxy.disarm()
      await purge(direct, bucket, fs.prefix)
    }
  })

  const stored = async (path: string): Promise<string> => {
    const out = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: fs.prefix + path }))
    return (await out.Body?.transformToString('utf-8')) ?? ''
  }

  it('a write cut mid-upload is a retryable FS_IO_ERROR; the old object is intact; the next write succeeds', async () => {
    const target = await fs.resolve('big.txt')
    const old = await fs.writeText(target, 'old content\n')
    const big = 'x'.repeat(2 * MiB)
    proxy.arm({ direction: 'up', method: 'PUT', afterBytes: 256 * 1024 })
    const cutsBefore = proxy.cuts
    const err = await failure(fs.writeText(target, big))
    expect([err.code, err.retryable]).toEqual(['FS_IO_ERROR', true])
    expect(proxy.cuts - cutsBefore).toBeGreaterThanOrEqual(1)
    proxy.disarm()
    expect(await stored('big.txt')).toBe('old content\n')
    expect((await fs.stat(target))?.version).toBe(old.version)
    const next = await fs.writeText(target, big, { expected: { kind: 'replaceIfVersion', version: old.version } })
    expect(next.before).toBe('old content\n')
    expect(await stored('big.txt')).toBe(big)
  })

  it('a guarded write and an edit cut mid-upload fail cleanly and keep the version usable', async () => {
    const target = await fs.resolve('g.txt')
    const { version } = await fs.writeText(target, `head ${'y'.repeat(MiB)}`)
    proxy.arm({ direction: 'up', method: 'PUT', afterBytes: 64 * 1024 })
    const guarded = await failure(fs.writeText(target, 'z'.repeat(MiB), { expected: { kind: 'replaceIfVersion', version } }))
    const edit = await failure(fs.editText(target, { oldString: 'head', newString: 'HEAD', replaceAll: false }, { expected: { version } }))
    for (const err of [guarded, edit]) expect([err.code, err.retryable]).toEqual(['FS_IO_ERROR', true])
    proxy.disarm()
    expect((await fs.stat(target))?.version).toBe(version)
    const outcome = await fs.editText(target, { oldString: 'head', newString: 'HEAD', replaceAll: false }, { expected: { version } })
    expect(outcome.after.startsWith('HEAD ')).toBe(true)
  })

  it('a read cut mid-download is a retryable FS_IO_ERROR (readText and streamText); the next read succeeds', async () => {
    const text = 'abcdefghij\n'.repeat(400_000)
    const target = await fs.resolve('down.txt')
    await fs.writeText(target, text)
    proxy.arm({ direction: 'down', method: 'GET', afterBytes: MiB })
    const read = await failure(fs.readText(target))
    const streamed = await failure(
      (async () => {
        let length = 0
        for await (const chunk of await fs.streamText(target)) length += chunk.length
        return length
      })(),
    )
    for (const err of [read, streamed]) expect([err.code, err.retryable]).toEqual(['FS_IO_ERROR', true])
    proxy.disarm()
    expect((await fs.readText(target)) === text).toBe(true)
    let length = 0
    for await (const chunk of await fs.streamText(target)) length += chunk.length
    expect(length).toBe(text.length)
  })

  it('a guarded write whose response is lost after the server applied it is reported as done, not stale', async () => {
    const target = await fs.resolve('lost-answer.txt')
    const cutsBefore = proxy.cuts
    // Lose the answer to the first PUT only: the SDK retries, and the retry meets its own write (412).
    proxy.arm({ direction: 'down', method: 'PUT', afterBytes: 0, times: 1 })
    const created = await fs.writeText(target, 'mine', { expected: { kind: 'createIfAbsent' } })
    expect(proxy.cuts - cutsBefore).toBe(1)
    expect(created.operation).toBe('create')
    expect((await fs.stat(target))?.version).toBe(created.version)
    proxy.arm({ direction: 'down', method: 'PUT', afterBytes: 0, times: 1 })
    const replaced = await fs.writeText(target, 'mine again', { expected: { kind: 'replaceIfVersion', version: created.version } })
    expect(proxy.cuts - cutsBefore).toBe(2)
    expect(replaced.before).toBe('mine')
    expect(await stored('lost-answer.txt')).toBe('mine again')
  })
})
