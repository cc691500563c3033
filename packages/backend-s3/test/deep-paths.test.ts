/**
 * `resolve` costs a number of requests that grows with the log of the depth, not the depth: the
 * "path through a file" check bisects for the deepest directory on the path instead of a HEAD per
 * ancestor (which made a 2,000-segment path 1,999 requests). Counted by a middleware on the SDK
 * client (once per HTTP attempt), as in requests.test.ts; and the check still finds a file at any
 * level of a deep path.
 */
import { codeOf } from '@seamfs/conformance'
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { S3FileSystem } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const short: Record<string, string> = { HeadObjectCommand: 'HEAD', ListObjectsV2Command: 'LIST', GetObjectCommand: 'GET', PutObjectCommand: 'PUT' }

/** `d/d/…/d/<leaf>`: a path of `n` segments (one-letter directories, so that a deep one still fits S3's 1,024-byte keys). */
const deep = (n: number, leaf = 'f.txt', dir = 'd'): string => `${`${dir}/`.repeat(n - 1)}${leaf}`

describe.skipIf(server === null)(`S3FileSystem: resolve of deep paths${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  const bucket = server?.bucket ?? ''
  const prefix = freshPrefix('deep')
  const counts = new Map<string, number>()
  const rows: string[] = []
  let client: S3Client
  let fs: S3FileSystem

  const put = (rel: string, body = 'x'): Promise<unknown> => client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${rel}`, Body: body }))

  /** The requests `fn` made, e.g. `HEAD 1, LIST 1` (empty: none). */
  async function measure(label: string, fn: () => Promise<unknown>): Promise<string> {
    counts.clear()
    await fn()
    const measured = [...counts.entries()]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')
    rows.push(`${label.padEnd(58)} ${measured || '(none)'}`)
    return measured
  }

  beforeAll(async () => {
    if (server === null) return
    client = rawClient(server)
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = short[context.commandName ?? ''] ?? context.commandName ?? '?'
        counts.set(name, (counts.get(name) ?? 0) + 1)
        return next(args)
      },
      { step: 'deserialize', name: 'countRequests' },
    )
    fs = await S3FileSystem.open({ client, bucket, prefix })
  })
  afterAll(async () => {
    if (server === null) return
    await purge(client, bucket, prefix)
    client.destroy()
    console.log(['resolve: requests by depth (radosgw)', ...rows].join('\n'))
  })

  it('nothing exists along the path: none at depth 1, a HEAD per level to depth 3, then a LIST per halving', async () => {
    expect(await measure('depth 1, nothing exists', () => fs.resolve('new/../f.txt'))).toBe('')
    expect(await measure('depth 3, nothing exists', () => fs.resolve(deep(3)))).toBe('HEAD 2')
    expect(await measure('depth 10, nothing exists', () => fs.resolve(`x/${deep(9)}`))).toBe('HEAD 2, LIST 4')
    // Levels whose key would pass 1,024 bytes cannot exist: they cost no request.
    expect(await measure('depth 2000, nothing exists', () => fs.resolve(`x/${deep(1999)}`))).toBe('HEAD 1, LIST 8')
  })

  it('the parent directory exists: 1 LIST + 1 HEAD whatever the depth', async () => {
    await put(deep(10))
    await put(deep(400))
    expect(await measure('depth 2, parent exists', () => fs.resolve(deep(2, 'n.txt')))).toBe('HEAD 1')
    expect(await measure('depth 10, parent exists', () => fs.resolve(deep(10, 'n.txt')))).toBe('HEAD 1, LIST 1')
    expect(await measure('depth 400, parent exists', () => fs.resolve(deep(400, 'n.txt')))).toBe('HEAD 1, LIST 1')
    expect(await measure('depth 2000, the upper 400 levels exist', () => fs.resolve(deep(2000)))).toBe('HEAD 2, LIST 9')
  })

  it('a file at any level of a deep path makes the path FS_NOT_FOUND; its siblings still resolve', async () => {
    const base = 'files'
    await put(`${base}/${deep(30, 'leaf')}`)
    // d0/…/d29-segment path where level `at` is a file: paths through it, below it, deep below it.
    for (const at of [1, 2, 7, 29]) {
      const file = `${base}/${deep(at, `f${at}`)}`
      await put(file)
      for (const below of [`${file}/x.txt`, `${file}/a/b/c/d/e/x.txt`, `${file}/${deep(1200)}`]) {
        expect(await codeOf(fs.resolve(below)), below.slice(0, 80)).toBe('FS_NOT_FOUND')
      }
      expect(await codeOf(fs.resolve(`${base}/${deep(at, `g${at}`)}/x.txt`)), 'a sibling directory that does not exist').toBe('ok')
    }
    expect(await codeOf(fs.resolve(`${base}/${deep(30, 'leaf')}`))).toBe('ok')
    expect(await codeOf(fs.resolve(`${base}/${deep(30, 'leaf')}/under/a/file.txt`))).toBe('FS_NOT_FOUND')
  })

  it('a key that is both a file and the deepest directory on the path is a file there, at any depth', async () => {
    const both = `both/${deep(40, 'b')}`
    await put(both)
    await put(`${both}/child.txt`)
    expect(await codeOf(fs.resolve(`${both}/child.txt`))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve(`${both}/new/deeper/still/x.txt`))).toBe('FS_NOT_FOUND')
  })

  it('a write under new directories of a deep path is refused when a parent became a file since resolve', async () => {
    const target = await fs.resolve(`late/${deep(50)}`)
    await put(`late/${deep(20, 'd')}`)
    expect(await codeOf(fs.writeText(target, 'x'))).toBe('FS_NOT_FOUND')
  })
})
