/**
 * The S3 side: seamfs (`S3FileSystem` for the file operations, the `glob`/`grep` tools for the
 * searches), the bare `@aws-sdk/client-s3` calls (the one-request limit: read = 1 GET, write =
 * 1 PUT, createIfAbsent = 1 PUT with If-None-Match, edit = GET + PUT with If-Match, grep =
 * LIST + GETs 16 at a time) and `@flystorage/aws-s3`, all through the proxy. Requests are
 * counted by a deserialize-step middleware (once per HTTP attempt), as
 * packages/backend-s3/test/requests.test.ts does.
 */
import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { AwsS3StorageAdapter } from '@flystorage/aws-s3'
import { FileStorage } from '@flystorage/file-storage'
import { S3FileSystem } from '@seamfs/backend-s3'
import { bounded, fixtureFiles, NEEDLE, WRITTEN } from './fixtures.js'
import { RequestCounter, type Subject } from './measure.js'
import { seamfsOps } from './seamfs-ops.js'
import type { S3Info } from './servers.js'

// The SDK warns once per process that Node 20 support ends in 2027.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'

const SHORT: Record<string, string> = {
  HeadObjectCommand: 'HEAD',
  GetObjectCommand: 'GET',
  PutObjectCommand: 'PUT',
  ListObjectsV2Command: 'LIST',
  ListObjectVersionsCommand: 'LIST-VERSIONS',
  DeleteObjectCommand: 'DELETE',
  DeleteObjectsCommand: 'DELETE-OBJECTS',
  CopyObjectCommand: 'COPY',
}

/** A client with radosgw's settings on `endpoint`, counting its HTTP attempts into `counter`. */
export function s3Client(server: S3Info, endpoint: string, counter?: RequestCounter): S3Client {
  const client = new S3Client({
    endpoint,
    region: server.region,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  if (counter !== undefined) countRequests(client, counter)
  return client
}

/** Counts every HTTP attempt `client` sends into `counter`, by command (a deserialize-step middleware runs once per attempt). */
export function countRequests(client: S3Client, counter: RequestCounter): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counter.add(SHORT[context.commandName ?? ''] ?? context.commandName ?? '?')
      return next(args)
    },
    { step: 'deserialize', name: 'countRequests' },
  )
}

/** Writes the fixtures under `prefix` straight to radosgw (no proxy). */
export async function writeS3Fixtures(server: S3Info, prefix: string, listed: readonly number[]): Promise<void> {
  const client = s3Client(server, server.endpoint)
  try {
    const files = [...fixtureFiles(listed)]
    await bounded(files, 32, ([key, body]) => client.send(new PutObjectCommand({ Bucket: server.bucket, Key: `${prefix}${key}`, Body: body })))
  } finally {
    client.destroy()
  }
}

/** Deletes every key under `prefix` (the bucket is unversioned). */
export async function purgeS3(server: S3Info, prefix: string): Promise<void> {
  const client = s3Client(server, server.endpoint)
  try {
    for (;;) {
      const page = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix }))
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key }))
      if (keys.length === 0) return
      await client.send(new DeleteObjectsCommand({ Bucket: server.bucket, Delete: { Objects: keys, Quiet: true } }))
    }
  } finally {
    client.destroy()
  }
}

function counted(name: string, counter: RequestCounter, ops: Subject['ops'], close: () => Promise<void>): Subject {
  return { name, requests: () => counter.total(), detail: () => counter.detail(), reset: () => counter.reset(), ops, close }
}

/**
 * seamfs over the proxy (atomic guards, as the request-count test opens it); each operation resolves
 * first, and writes carry the guards the write tool sends under its read-before-write policy.
 */
export async function seamfsS3(server: S3Info, endpoint: string, prefix: string): Promise<Subject> {
  const counter = new RequestCounter()
  const client = s3Client(server, endpoint, counter)
  const fs = await S3FileSystem.open({ client, bucket: server.bucket, prefix })
  return counted('seamfs', counter, seamfsOps(fs), async () => {
    await fs.close()
    client.destroy()
  })
}

/** The bare SDK calls: the fewest requests each operation can take. */
export function bareSdk(server: S3Info, endpoint: string, prefix: string): Subject {
  const counter = new RequestCounter()
  const client = s3Client(server, endpoint, counter)
  const Bucket = server.bucket
  const get = async (key: string): Promise<{ body: string; etag: string | undefined }> => {
    const out = await client.send(new GetObjectCommand({ Bucket, Key: `${prefix}${key}` }))
    return { body: (await out.Body?.transformToString('utf8')) ?? '', etag: out.ETag }
  }
  const put = (key: string, body: string, guard: { IfNoneMatch?: string; IfMatch?: string } = {}): Promise<unknown> =>
    client.send(new PutObjectCommand({ Bucket, Key: `${prefix}${key}`, Body: body, ...guard }))
  const list = async (dir: string, deep: boolean): Promise<string[]> => {
    const keys: string[] = []
    let ContinuationToken: string | undefined
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket,
          Prefix: `${prefix}${dir}/`,
          ...(deep ? {} : { Delimiter: '/' }),
          ...(ContinuationToken === undefined ? {} : { ContinuationToken }),
        }),
      )
      for (const o of page.Contents ?? []) keys.push((o.Key ?? '').slice(prefix.length))
      for (const p of page.CommonPrefixes ?? []) keys.push((p.Prefix ?? '').slice(prefix.length))
      ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined
    } while (ContinuationToken !== undefined)
    return keys
  }
  let mark = 'A'
  return counted(
    'sdk',
    counter,
    {
      'read 4 KiB': () => get('data/small.txt'),
      'read 10 MiB': () => get('data/big.txt'),
      'write new': (rep) => put(`w-sdk/new-${rep}.txt`, WRITTEN),
      overwrite: () => put('data/over.txt', WRITTEN),
      'overwrite, no before': () => put('data/over.txt', WRITTEN),
      createIfAbsent: (rep) => put(`w-sdk/cia-${rep}.txt`, WRITTEN, { IfNoneMatch: '*' }),
      edit: async () => {
        const next = mark === 'A' ? 'B' : 'A'
        const { body, etag } = await get('data/edit-sdk.txt')
        await put(
          'data/edit-sdk.txt',
          body.replace(`MARK-${mark}`, `MARK-${next}`), // radosgw 16.2 takes the ETag unquoted in If-Match (what seamfs's probe finds as ifMatchForm).
          etag === undefined ? {} : { IfMatch: etag.replaceAll('"', '') },
        )
        mark = next
      },
      'list 100': () => list('list100', false),
      'list 2,500': () => list('list2500', false),
      stat: (rep) => client.send(new HeadObjectCommand({ Bucket, Key: `${prefix}list2500/f${String((rep + 700) % 2500).padStart(4, '0')}.txt` })),
      'glob 200 files': async () => (await list('tree', true)).filter((k) => k.endsWith('.txt')),
      'grep 200 files': async () => {
        const hits: string[] = []
        await bounded(await list('tree', true), 16, async (key) => {
          if ((await get(key)).body.includes(NEEDLE)) hits.push(key)
        })
        return hits
      },
    },
    async () => client.destroy(),
  )
}

/** `@flystorage/aws-s3` behind `FileStorage`, as its README shows; createIfAbsent = fileExists + write. */
export function flystorage(server: S3Info, endpoint: string, prefix: string): Subject {
  const counter = new RequestCounter()
  const client = s3Client(server, endpoint, counter)
  const storage = new FileStorage(new AwsS3StorageAdapter(client, { bucket: server.bucket, prefix: prefix.replace(/\/$/, '') }))
  const files = async (dir: string): Promise<string[]> =>
    (await storage.list(dir, { deep: true }).toArray()).filter((e) => e.type === 'file').map((e) => e.path)
  let mark = 'A'
  return counted(
    'flystorage',
    counter,
    {
      'read 4 KiB': () => storage.readToString('data/small.txt'),
      'read 10 MiB': () => storage.readToString('data/big.txt'),
      'write new': (rep) => storage.write(`w-flystorage/new-${rep}.txt`, WRITTEN),
      overwrite: () => storage.write('data/over.txt', WRITTEN),
      'overwrite, no before': () => storage.write('data/over.txt', WRITTEN),
      createIfAbsent: async (rep) => {
        const path = `w-flystorage/cia-${rep}.txt`
        if (!(await storage.fileExists(path))) await storage.write(path, WRITTEN)
      },
      edit: async () => {
        const next = mark === 'A' ? 'B' : 'A'
        const body = await storage.readToString('data/edit-flystorage.txt')
        await storage.write('data/edit-flystorage.txt', body.replace(`MARK-${mark}`, `MARK-${next}`))
        mark = next
      },
      'list 100': () => storage.list('list100', { deep: false }).toArray(),
      'list 2,500': () => storage.list('list2500', { deep: false }).toArray(),
      stat: (rep) => storage.stat(`list2500/f${String((rep + 1400) % 2500).padStart(4, '0')}.txt`),
      'glob 200 files': async () => (await files('tree')).filter((f) => f.endsWith('.txt')),
      'grep 200 files': async () => {
        const hits: string[] = []
        for (const file of await files('tree')) if ((await storage.readToString(file)).includes(NEEDLE)) hits.push(file)
        return hits
      },
    },
    async () => client.destroy(),
  )
}
