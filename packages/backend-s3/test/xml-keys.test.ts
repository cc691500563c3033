/**
 * Names XML 1.0 cannot carry (control characters, U+FFFE, U+FFFF) are valid S3 keys, and a file
 * may have one. S3 speaks XML in its listings (sent URL-encoded) and in DeleteObjects' request body,
 * which cannot hold such a key: a recursive remove deletes those keys
 * one at a time instead, and takes the whole directory down. Found by the kit's generative names.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import { S3FileSystem } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const NAMES = ['a\u0001b.txt', '\u001f', 'x\uffff', '\ufffe.txt', 'tab\there.txt', 'plain.txt']

describe.skipIf(server === null)(`S3FileSystem: keys XML cannot carry${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  const bucket = server?.bucket ?? ''
  const prefix = freshPrefix('xml')
  let client: S3Client
  let fs: S3FileSystem

  beforeAll(async () => {
    if (server === null) return
    client = rawClient(server)
    fs = await S3FileSystem.open({ client, bucket, prefix, cwd: '/ws' })
  })
  afterAll(async () => {
    if (server === null) return
    await purge(client, bucket, prefix)
    client.destroy()
  })

  const keysUnder = async (under: string): Promise<number> =>
    (await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${under}`, EncodingType: 'url' }))).KeyCount ?? 0

  it('such names are listed and read; a recursive remove takes them all down', async () => {
    for (const name of NAMES) await fs.writeText(await fs.resolve(`d/${name}`), `content of ${JSON.stringify(name)}`)
    const listed = (await fs.listDir(await fs.resolve('d'))).map((e) => e.name)
    expect(new Set(listed)).toEqual(new Set(NAMES))
    for (const name of NAMES) expect(await fs.readText(await fs.resolve(`d/${name}`))).toBe(`content of ${JSON.stringify(name)}`)
    const removed = await fs.remove(await fs.resolve('d'), { recursive: true })
    expect(removed.type).toBe('directory')
    expect(await fs.stat(await fs.resolve('d'))).toBeUndefined()
    expect(await keysUnder('ws/d/')).toBe(0)
  })
})
