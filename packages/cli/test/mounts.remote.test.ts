/**
 * A `mounts` config with S3 under memory, on the live S3 test server (the `remote` project boots
 * it): keys from the environment, never in the description; the tools write, read, list and grep
 * through both stores as one tree.
 */
import { describe, expect, inject, it } from 'vitest'
import { loadHarness } from '@seamfs/cli'

// The S3 SDK warns once per process that Node 20 support ends in 2027; the package pins its version.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'

const s3 = inject('s3')
describe.skipIf(s3 === null)(`mounts with s3 at /memories${s3 === null ? ` — SKIPPED: ${inject('s3Why')}` : ''}`, () => {
  it('memory at / and s3 at /memories: one tree, one sandbox, no secret in the description', async () => {
    if (s3 === null) return
    const env = { SEAMFS_TEST_KEY_ID: s3.accessKeyId, SEAMFS_TEST_SECRET: s3.secretAccessKey }
    const prefix = `cli-mounts-${Date.now()}/`
    const memories = {
      type: 's3',
      bucket: s3.bucket,
      prefix,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      accessKeyIdEnv: 'SEAMFS_TEST_KEY_ID',
      secretAccessKeyEnv: 'SEAMFS_TEST_SECRET',
    }
    const h = await loadHarness({ mounts: { '/': { type: 'memory', files: { 'a.md': 'TODO here\n' } }, '/memories': memories } }, { env })
    const run = (name: string, args: Record<string, unknown>) => h.tool(name).execute(args, { session: 't' })
    try {
      expect(h.description).toBe(
        `mounts / (memory), /memories (s3://${s3.bucket}/${prefix} at ${s3.endpoint}); workspace-write in the root, reads confined to it; read-before-write on`,
      )
      expect(h.description).not.toContain(s3.accessKeyId)
      expect(h.description).not.toContain(s3.secretAccessKey)
      expect(await run('write', { file_path: '/memories/m.md', content: 'TODO there\n' })).toMatchObject({ isError: false })
      expect((await run('read', { file_path: '/memories/m.md' })).text).toContain('1: TODO there')
      expect((await run('list', { path: '/' })).text).toBe(
        '<path>/</path>\n<type>directory</type>\n<content>\nmemories/\na.md\n\n(2 entries: 1 directory, 1 file)\n</content>',
      )
      expect((await run('grep', { pattern: 'TODO' })).text).toBe('Found 2 matches\n\na.md\nLine 1: TODO here\n\nmemories/m.md\nLine 1: TODO there')
      expect(await run('move', { source_path: '/memories/m.md', destination_path: '/m.md' })).toMatchObject({ isError: true, code: 'FS_UNSUPPORTED' })
      expect(await run('delete', { path: '/memories/m.md' })).toMatchObject({ isError: false })
    } finally {
      await h.close()
    }
  })
})
