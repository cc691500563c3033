/**
 * OpenTelemetry on SFTP (issue 35): the traced read → edit → stale edit → move flow of
 * `packages/tools/test/tracing-flow.ts`, with the real SDK, on the test sshd.
 */
import { describe, inject, it } from 'vitest'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { assertTracedFlow, tracedFlow } from '../../tools/test/tracing-flow.js'
import { titled } from './helpers.js'
import { suiteScratch } from './raw.js'

const server = inject('sftp')

describe.skipIf(server === null)(titled('TracedFileSystem on SFTP', server, inject('sftpWhy')), () => {
  let root = ''
  suiteScratch(server, 'traced-', (scratch) => {
    root = scratch.base
  })

  it('a span per tool call, the store calls under it, errors by code, bytes and latency', async () => {
    const fs = new SftpFileSystem({ ...server!, root })
    try {
      assertTracedFlow(await tracedFlow(fs, root))
    } finally {
      await fs.close()
    }
  })
})
