/**
 * Overlapping mounts where it cannot be told for certain, on the live test
 * servers: an SFTP mount of this machine (the test sshd on 127.0.0.1) beside a local mount of the
 * same directory, and two S3 mounts of one bucket with nested prefixes. They load, with a warning
 * naming both mounts, which the CLI prints after its serving line; stores beside each other load
 * without one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { loadHarness, runCli, type BackendConfig, type Io } from '@seamfs/cli'
import { RawSftp } from '../../backend-ssh/test/raw.js'
import { sftpBackend } from './support.js'

// The S3 SDK warns once per process that Node 20 support ends in 2027; the package pins its version.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'

const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('overlapping mounts that may be one store: loaded, with a warning', () => {
  const sftp = inject('sftp')
  it.skipIf(sftp === null)(`an SFTP mount of this machine inside a local mount${sftp === null ? ` — SKIPPED: ${inject('sftpWhy')}` : ''}`, async () => {
    if (sftp === null) return
    const raw = await RawSftp.connect(sftp)
    const dir = await raw.freshDir(sftp.root, 'overlap-')
    await raw.mkdirp(`${dir}/docs`)
    await raw.mkdirp(`${dir}/beside`)
    cleanups.push(async () => {
      await raw.rmrf(dir)
      raw.close()
    })
    const keyDir = mkdtempSync(join(tmpdir(), 'seamfs-overlap-key-'))
    writeFileSync(join(keyDir, 'id'), sftp.privateKey, { mode: 0o600 })
    cleanups.push(() => rmSync(keyDir, { recursive: true, force: true }))
    const remote = (root: string): BackendConfig & { readOnly: true } => ({ ...sftpBackend(sftp, root, join(keyDir, 'id')), readOnly: true })
    // The sshd serves this machine's disk: the SFTP root is the local root's docs directory.
    const mounts = { '/': { type: 'local', root: dir }, '/docs': remote(`${dir}/docs`) }
    const h = await loadHarness({ mounts })
    try {
      const url = `sftp://${encodeURIComponent(sftp.username)}@${sftp.host}:${sftp.port}${dir}/docs`
      expect(h.warnings).toEqual([
        `mounts["/docs"] (read-only) and mounts["/"] may be one store, the writable one holding it (${dir} holds ${url}): if they are, the read-only files can be edited through "/"`,
      ])
    } finally {
      await h.close()
    }
    const beside = await loadHarness({ mounts: { '/': { type: 'local', root: `${dir}/beside` }, '/docs': remote(`${dir}/docs`) } })
    try {
      expect(beside.warnings).toEqual([])
    } finally {
      await beside.close()
    }
    // The CLI prints each warning on its own line, after the serving line, and serves.
    const cwd = mkdtempSync(join(tmpdir(), 'seamfs-overlap-cli-'))
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ mounts }))
    let stdout = ''
    let stderr = ''
    const io: Io = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stdin: async () => '', cwd, env: process.env }
    expect(await runCli(['ls', '/'], io)).toBe(0)
    expect(stderr.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^seamfs: warning: mounts\["\/docs"\] \(read-only\) and mounts\["\/"\] may be one store/),
      '',
    ])
    expect(stdout).toContain('docs/')
  })

  const s3 = inject('s3')
  it.skipIf(s3 === null)(`two S3 mounts of one bucket with nested prefixes${s3 === null ? ` — SKIPPED: ${inject('s3Why')}` : ''}`, async () => {
    if (s3 === null) return
    const env = { SEAMFS_TEST_KEY_ID: s3.accessKeyId, SEAMFS_TEST_SECRET: s3.secretAccessKey }
    const prefix = `cli-overlap-${Date.now()}/`
    const bucket = (at: string, readOnly = false) => ({
      type: 's3',
      bucket: s3.bucket,
      prefix: at,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      accessKeyIdEnv: 'SEAMFS_TEST_KEY_ID',
      secretAccessKeyEnv: 'SEAMFS_TEST_SECRET',
      readOnly,
    })
    const h = await loadHarness(
      {
        mounts: {
          '/': { type: 'memory' },
          '/all': bucket(prefix),
          '/docs': bucket(`${prefix}docs/`, true),
          '/other': bucket(`cli-overlap-other-${Date.now()}/`, true),
        },
      },
      { env },
    )
    try {
      expect(h.warnings).toHaveLength(1)
      expect(h.warnings[0]).toMatch(/^mounts\["\/docs"\] \(read-only\) and mounts\["\/all"\] may be one store, the writable one holding it \(s3:\/\//)
    } finally {
      await h.close()
    }
  })
})
