/**
 * loadHarness on the live test servers (the `remote` project boots them): S3 with keys from
 * the environment, SFTP from a key file with the host key pinned; descriptions hold no secret.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { loadHarness } from '@seamfs/cli'

// The S3 SDK warns once per process that Node 20 support ends in 2027; the package pins its version.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'

type LiveSftp = NonNullable<ReturnType<typeof inject<'sftp'>>>

/** The config of the test sshd, its private key written to a file in `dir`. */
function sftpBackend(sftp: LiveSftp, dir: string): Record<string, unknown> {
  const keyFile = join(dir, 'id')
  writeFileSync(keyFile, sftp.privateKey, { mode: 0o600 })
  return {
    type: 'sftp',
    host: sftp.host,
    port: sftp.port,
    username: sftp.username,
    root: sftp.root,
    privateKeyFile: keyFile,
    hostKeySha256: sftp.hostKeySha256,
  }
}

describe('loadHarness on the live servers', () => {
  const s3 = inject('s3')
  describe.skipIf(s3 === null)(`on the S3 test server${s3 === null ? ` — SKIPPED: ${inject('s3Why')}` : ''}`, () => {
    it('mounts s3 with keys from the environment; the description holds none of them', async () => {
      if (s3 === null) return
      const env = { SEAMFS_TEST_KEY_ID: s3.accessKeyId, SEAMFS_TEST_SECRET: s3.secretAccessKey }
      const prefix = `cli-config-${Date.now()}/`
      const h = await loadHarness(
        {
          backend: {
            type: 's3',
            bucket: s3.bucket,
            prefix,
            endpoint: s3.endpoint,
            region: s3.region,
            forcePathStyle: true,
            accessKeyIdEnv: 'SEAMFS_TEST_KEY_ID',
            secretAccessKeyEnv: 'SEAMFS_TEST_SECRET',
          },
        },
        { env },
      )
      try {
        expect(h.description).toBe(`s3://${s3.bucket}/${prefix} at ${s3.endpoint}; workspace-write in the root, reads confined to it; read-before-write on`)
        expect(h.description).not.toContain(s3.accessKeyId)
        expect(h.description).not.toContain(s3.secretAccessKey)
        const l = await h.tool('list').execute({}, { session: 't' })
        expect(l.isError).toBe(false)
      } finally {
        await h.close()
      }
    })
  })

  const sftp = inject('sftp')
  describe.skipIf(sftp === null)(`on the SFTP test server${sftp === null ? ` — SKIPPED: ${inject('sftpWhy')}` : ''}`, () => {
    it('mounts sftp from a key file with the host key pinned, and the tools write and read through it', async () => {
      if (sftp === null) return
      const dir = mkdtempSync(join(tmpdir(), 'seamfs-cli-sftp-'))
      const h = await loadHarness({ backend: sftpBackend(sftp, dir) })
      try {
        expect(h.description).toBe(
          `sftp://${sftp.username}@${sftp.host}:${sftp.port}${sftp.root}; workspace-write in the root, reads confined to it; read-before-write on`,
        )
        const name = `cli-${Date.now()}.txt`
        const wrote = await h.tool('write').execute({ file_path: name, content: 'over ssh\n' }, { session: 't' })
        expect(wrote.isError).toBe(false)
        const read = await h.tool('read').execute({ file_path: name }, { session: 't' })
        expect(read.text).toContain('1: over ssh')
      } finally {
        await h.close()
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it("paths: 'workspace' on sftp: the model sees the root as /, never the server's path", async () => {
      if (sftp === null) return
      const dir = mkdtempSync(join(tmpdir(), 'seamfs-cli-sftp-'))
      const h = await loadHarness({ backend: sftpBackend(sftp, dir), paths: 'workspace' })
      try {
        expect(h.description).toBe(
          `sftp://${sftp.username}@${sftp.host}:${sftp.port}${sftp.root}, shown as /; workspace-write in the root, reads confined to it; read-before-write on`,
        )
        const name = `view-${Date.now()}.txt`
        const texts: string[] = []
        for (const [tool, args] of [
          ['write', { file_path: name, content: 'seen from /\n' }],
          ['read', { file_path: `/${name}` }],
          ['list', {}],
          ['grep', { pattern: 'seen from' }],
          ['read', { file_path: 'missing.txt' }],
        ] as const) {
          texts.push((await h.tool(tool).execute(args, { session: 't' })).text)
        }
        expect(texts[1]).toContain(`<path>/${name}</path>`)
        for (const text of texts) expect(text).not.toContain(sftp.root)
      } finally {
        await h.close()
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it('a root that does not exist is a config error when the harness opens, not a fence that denies every path', async () => {
      if (sftp === null) return
      const root = `${sftp.root}/missing-${Date.now()}`
      const backend = { type: 'sftp', host: sftp.host, port: sftp.port, username: sftp.username, root, hostKeySha256: sftp.hostKeySha256 }
      const dir = mkdtempSync(join(tmpdir(), 'seamfs-cli-sftp-'))
      const keyFile = join(dir, 'id')
      writeFileSync(keyFile, sftp.privateKey, { mode: 0o600 })
      try {
        await expect(loadHarness({ backend: { ...backend, privateKeyFile: keyFile } })).rejects.toThrow(
          `config: backend.root: expected an existing directory, found "${root}", which does not exist`,
        )
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it('a wrong pinned host key refuses the connection', async () => {
      if (sftp === null) return
      const h = await loadHarness({
        backend: {
          type: 'sftp',
          host: sftp.host,
          port: sftp.port,
          username: sftp.username,
          root: sftp.root,
          hostKeySha256: 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        },
      })
      try {
        const listed = await h.tool('list').execute({}, { session: 't' })
        expect(listed.isError).toBe(true)
      } finally {
        await h.close()
      }
    })
  })
})
