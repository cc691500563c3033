/**
 * The S3 rows of the tool table: the tools over an `S3FileSystem` opened as the CLI opens it (its
 * own client, with its deadlines; only the endpoint is the proxy), next to the bare
 * `@aws-sdk/client-s3` calls that do the same job in the fewest requests.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { S3FileSystem } from '@seamfs/backend-s3'
import { bounded, NEEDLE, readFile, SMALL, WRITTEN } from './fixtures.js'
import { RequestCounter } from './measure.js'
import type { LatencyProxy } from './proxy.js'
import { countRequests, s3Client } from './s3.js'
import type { S3Info } from './servers.js'
import { NEEDLE_FILES, SEARCH_CONCURRENCY, TOOL_ROWS, toolSteps, TREE_FILES, type ToolRowName } from './tool-steps.js'
import type { Step, Target, ToolBackend, ToolRow } from './tool-table.js'

const atMost = (text: string, n: number): Target => ({ text: `${text}: target ≤ ${n} RT`, bound: () => n })

/** The bare client's side of each row, with what it sends and the target for the tool. */
function bareRows(client: S3Client, bucket: string, prefix: string): Record<ToolRowName, { label: string; bare: Step; target?: Target }> {
  const get = async (key: string): Promise<{ body: string; etag: string }> => {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}${key}` }))
    // radosgw 16.2 takes the ETag unquoted in If-Match (what seamfs's probe finds as ifMatchForm).
    return { body: (await out.Body?.transformToString('utf8')) ?? '', etag: (out.ETag ?? '').replaceAll('"', '') }
  }
  const put = (key: string, body: string, ifMatch?: string): Promise<unknown> =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: body, ...(ifMatch === undefined ? {} : { IfMatch: ifMatch }) }))
  /** One page of a listing (every listing here fits in one). */
  const list = async (dir: string, deep: boolean): Promise<string[]> => {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${dir}/`, ...(deep ? {} : { Delimiter: '/' }) }))
    if (page.IsTruncated === true) throw new Error(`LIST ${dir}: more than one page`)
    return [...(page.Contents ?? []).map((o) => o.Key ?? ''), ...(page.CommonPrefixes ?? []).map((p) => p.Prefix ?? '')].map((k) => k.slice(prefix.length))
  }
  const expect = (ok: boolean, what: string): void => {
    if (!ok) throw new Error(`bare S3: ${what}`)
  }
  let overEtag = ''
  let mark = 'A'
  return {
    'read 4 KiB': {
      label: 'GetObject',
      bare: { run: async (rep) => expect((await get(readFile(rep))).body === SMALL, 'read: wrong content') },
      target: atMost('S3 read', 1),
    },
    'write new file': {
      label: 'PutObject',
      bare: { run: (rep) => put(`data/new-bare-${rep}.txt`, WRITTEN).then(() => undefined) },
      target: atMost('S3 write of a new file', 2),
    },
    'overwrite after read': {
      label: 'PutObject If-Match',
      bare: {
        before: async () => void (overEtag = (await get('data/over-bare.txt')).etag),
        run: () => put('data/over-bare.txt', WRITTEN, overEtag).then(() => undefined),
      },
      target: atMost('S3 overwrite after read', 2),
    },
    'edit after read': {
      label: 'GetObject + PutObject If-Match',
      bare: {
        run: async () => {
          const next = mark === 'A' ? 'B' : 'A'
          const { body, etag } = await get('data/edit-bare.txt')
          expect(body.startsWith(`MARK-${mark}\n`), 'edit: mark not found')
          await put('data/edit-bare.txt', body.replace(`MARK-${mark}`, `MARK-${next}`), etag)
          mark = next
        },
      },
      target: { text: 'S3 edit: target 2 RT', bound: () => 2 },
    },
    'list 100': {
      label: 'ListObjectsV2 with delimiter',
      bare: { run: async () => expect((await list('list100', false)).length === 100, 'list: not 100 entries') },
    },
    'glob 200 files': {
      label: 'ListObjectsV2',
      bare: { run: async () => expect((await list('tree', true)).filter((k) => k.endsWith('.txt')).length === TREE_FILES, 'glob: not 200 files') },
      target: atMost('S3 glob over 200 files', 2),
    },
    'grep 200 files': {
      label: `ListObjectsV2 + ${TREE_FILES} GetObject, ${SEARCH_CONCURRENCY} at a time`,
      bare: {
        run: async () => {
          let hits = 0
          await bounded(await list('tree', true), SEARCH_CONCURRENCY, async (key) => {
            if ((await get(key)).body.includes(NEEDLE)) hits++
          })
          expect(hits === NEEDLE_FILES, 'grep: wrong number of hits')
        },
      },
      target: { text: `S3 grep over ${TREE_FILES} files: target ≤ the bare SDK`, bound: (bare) => bare },
    },
  }
}

/** The S3 rows over `proxy` (in front of radosgw), in the fixtures under `prefix`. */
export async function s3ToolBackend(server: S3Info, proxy: LatencyProxy, prefix: string): Promise<ToolBackend & { close(): Promise<void> }> {
  const endpoint = `http://127.0.0.1:${proxy.port}`
  const toolCounter = new RequestCounter()
  const fs = await S3FileSystem.open({
    bucket: server.bucket,
    prefix,
    endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  })
  countRequests(fs.client, toolCounter)
  const bareCounter = new RequestCounter()
  const client = s3Client(server, endpoint, bareCounter)
  const tools = toolSteps(fs)
  const bare = bareRows(client, server.bucket, prefix)
  const rows: ToolRow[] = TOOL_ROWS.map((name) => ({ name, tool: tools[name], bareLabel: bare[name].label, bare: bare[name].bare, target: bare[name].target }))
  return {
    name: 'S3',
    proxy,
    toolCounter,
    bareCounter,
    rows,
    close: async () => {
      await fs.close()
      client.destroy()
    },
  }
}
