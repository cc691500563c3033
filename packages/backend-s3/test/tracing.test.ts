/**
 * OpenTelemetry on S3 (issue 35): the traced read → edit → stale edit → move flow of
 * `packages/tools/test/tracing-flow.ts`, with the real SDK, on the test radosgw.
 */
import { afterAll, describe, it } from 'vitest'
import { S3FileSystem } from '@seamfs/backend-s3'
import { assertTracedFlow, tracedFlow } from '../../tools/test/tracing-flow.js'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

describe.skipIf(server === null)(`TracedFileSystem on S3${server === null ? ` — SKIPPED: ${serverWhy}` : ''}`, () => {
  const prefix = freshPrefix('traced')
  afterAll(async () => {
    if (server === null) return
    const raw = rawClient(server)
    await purge(raw, server.bucket, prefix)
    raw.destroy()
  })

  it('a span per tool call, the store calls under it, errors by code, bytes and latency', async () => {
    const fs = await S3FileSystem.open({
      bucket: server!.bucket,
      prefix,
      endpoint: server!.endpoint,
      region: server!.region,
      forcePathStyle: true,
      credentials: { accessKeyId: server!.accessKeyId, secretAccessKey: server!.secretAccessKey },
    })
    try {
      assertTracedFlow(await tracedFlow(fs, '/'))
    } finally {
      await fs.close()
    }
  })
})
