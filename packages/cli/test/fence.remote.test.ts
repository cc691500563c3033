/**
 * One meaning of `root` on every backend: the same harness config shape — the backend's root (or
 * S3 prefix) and nothing else, no `sandbox` block — gets the same hostile tool calls on local,
 * memory, S3 and SFTP. Nothing outside the root changes and no outside byte comes back. Where a
 * store can name a place outside its root (local and SFTP: `..`, absolute paths, symlinks) the call
 * is `FS_SANDBOX_DENIED`; where it cannot (S3 and memory: `/..` is `/`), the path lands inside.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { loadHarness, type BackendConfig, type Harness } from '@seamfs/cli'
import { RawSftp } from '../../backend-ssh/test/raw.js'
import { rawClient } from '../../backend-s3/test/support.js'
import { sftpBackend } from './support.js'

const SECRET = 'outside secret'
const PAYLOAD = 'pwned by the model\n'

/** The hostile calls: every one names a place outside the root, lexically or through a link. */
const WRITES = ['../escape.txt', '../outside/new.txt', 'link-out/new.txt', 'file-out', 'deep/../../escape2.txt']
const READS: readonly (readonly [string, Record<string, unknown>])[] = [
  ['read', { file_path: '../outside/secret.txt' }],
  ['read', { file_path: 'link-out/secret.txt' }],
  ['read', { file_path: 'file-out' }],
  ['list', { path: '../outside' }],
  ['list', { path: 'link-out' }],
  ['grep', { pattern: 'secret', path: '..' }],
  ['glob', { pattern: '**/*', path: '../outside' }],
]

interface World {
  /** The backend config: its root and the defaults, nothing else. */
  readonly backend: BackendConfig
  readonly env?: Readonly<Record<string, string>>
  /** Whether the store can name a place outside its root (else `..` stops at the root). */
  readonly addressable: boolean
  /** Whether anything exists outside the root at all (memory: the volume is the root). */
  readonly hasOutside: boolean
  /** Everything outside the root, as path → content. */
  outside(): Promise<Record<string, string>>
}

async function attack(world: World): Promise<void> {
  const before = await world.outside()
  if (world.hasOutside) expect(Object.values(before)).toContain(`${SECRET}\n`)
  const h: Harness = await loadHarness({ backend: world.backend }, world.env === undefined ? {} : { env: world.env })
  try {
    expect(h.sandbox).toEqual({ mode: 'workspace-write', workspaceRoot: '.', confineReads: true })
    for (const path of WRITES) {
      const r = await h.tool('write').execute({ file_path: path, content: PAYLOAD })
      if (world.addressable) expect([r.isError, r.code], `write ${path}: ${r.text}`).toEqual([true, 'FS_SANDBOX_DENIED'])
      else expect(r.code ?? 'ok', `write ${path}: ${r.text}`).toMatch(/^(ok|FS_SANDBOX_DENIED|FS_NOT_FOUND|FS_NOT_REGULAR_FILE)$/)
    }
    for (const [tool, args] of READS) {
      const r = await h.tool(tool).execute(args)
      expect(r.text, `${tool} ${JSON.stringify(args)}`).not.toContain(SECRET)
      if (world.addressable) expect(r.code, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe('FS_SANDBOX_DENIED')
    }
    // An edit of an outside file after reading it (so the policy is not what refuses).
    await h.tool('read').execute({ file_path: 'file-out' })
    const edit = await h.tool('edit').execute({ file_path: 'file-out', old_string: 'secret', new_string: 'PWNED' })
    // Refused by the fence, or by the policy first (the read was refused, so nothing was observed).
    if (world.addressable) expect(['FS_SANDBOX_DENIED', 'FS_NOT_OBSERVED']).toContain(edit.code)
    // Removes, moves (from and to the outside) and directories: the same fence, on every backend.
    await h.tool('write').execute({ file_path: 'mine.txt', content: 'mine\n' })
    await h.tool('read').execute({ file_path: 'mine.txt' })
    const mutations: (readonly [string, Record<string, unknown>])[] = [
      ['delete', { path: '../outside/secret.txt' }],
      ['delete', { path: 'link-out/secret.txt' }],
      ['delete', { path: 'file-out' }],
      ['delete', { path: '..' }],
      ['move', { source_path: '../outside/secret.txt', destination_path: 'stolen.txt' }],
      ['move', { source_path: 'link-out/secret.txt', destination_path: 'stolen2.txt' }],
      ['move', { source_path: 'mine.txt', destination_path: '../outside/planted.txt' }],
      ['move', { source_path: 'mine.txt', destination_path: 'link-out/planted.txt' }],
      ['create_directory', { path: '../outside/made' }],
      ['create_directory', { path: 'link-out/made' }],
    ]
    for (const [tool, args] of mutations) {
      const r = await h.tool(tool).execute(args)
      expect(r.text, `${tool} ${JSON.stringify(args)}`).not.toContain(SECRET)
      if (world.addressable) expect([r.isError, r.code], `${tool} ${JSON.stringify(args)}: ${r.text}`).toEqual([true, 'FS_SANDBOX_DENIED'])
    }
    // Inside still works.
    expect((await h.tool('write').execute({ file_path: 'fine.txt', content: 'ok\n' })).isError).toBe(false)
    expect((await h.tool('move').execute({ source_path: 'fine.txt', destination_path: 'moved/fine.txt' })).isError).toBe(false)
    expect((await h.tool('delete').execute({ path: 'moved/fine.txt' })).isError).toBe(false)
  } finally {
    await h.close()
  }
  expect(await world.outside(), 'nothing outside the root may change').toEqual(before)
}

describe('the root is a fence on every backend, with the defaults', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('local', async () => {
    const base = mkdtempSync(join(tmpdir(), 'seamfs-fence-'))
    const root = join(base, 'root')
    mkdirSync(join(root, 'deep'), { recursive: true })
    mkdirSync(join(base, 'outside'))
    writeFileSync(join(base, 'outside/secret.txt'), `${SECRET}\n`)
    symlinkSync(join(base, 'outside'), join(root, 'link-out'))
    symlinkSync(join(base, 'outside/secret.txt'), join(root, 'file-out'))
    const outside = async (): Promise<Record<string, string>> => ({
      ...Object.fromEntries(readdirSync(base).map((n) => [n, ''])),
      ...Object.fromEntries(readdirSync(join(base, 'outside')).map((n) => [`outside/${n}`, readFileSync(join(base, 'outside', n), 'utf8')])),
    })
    cleanups.push(async () => rmSync(base, { recursive: true, force: true }))
    await attack({ backend: { type: 'local', root }, addressable: true, hasOutside: true, outside })
  })

  it('memory (the volume is the root: `/..` is `/`)', async () => {
    const files = { 'deep/': null, 'link-out': { symlink: '/..' }, 'file-out': { symlink: '/../../etc/hostname' } }
    await attack({ backend: { type: 'memory', files }, addressable: false, hasOutside: false, outside: async () => ({}) })
  })

  const s3 = inject('s3')
  it.skipIf(s3 === null)(`s3${s3 === null ? ` — SKIPPED: ${inject('s3Why')}` : ''}`, async () => {
    if (s3 === null) return
    const client = rawClient(s3)
    const base = `fence-${Date.now()}-${Math.random().toString(36).slice(2)}/`
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${base}outside/secret.txt`, Body: `${SECRET}\n` }))
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${base}root/deep/keep.txt`, Body: 'keep\n' }))
    const outside = async (): Promise<Record<string, string>> => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: base }))
      const keys = (listed.Contents ?? []).map((o) => o.Key ?? '').filter((k) => !k.startsWith(`${base}root/`))
      return Object.fromEntries(keys.map((k) => [k, k.endsWith('secret.txt') ? `${SECRET}\n` : '?']))
    }
    const backend: BackendConfig = {
      type: 's3',
      bucket: s3.bucket,
      prefix: `${base}root/`,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      accessKeyIdEnv: 'FENCE_KEY',
      secretAccessKeyEnv: 'FENCE_SECRET',
    }
    await attack({ backend, env: { FENCE_KEY: s3.accessKeyId, FENCE_SECRET: s3.secretAccessKey }, addressable: false, hasOutside: true, outside })
    client.destroy()
  })

  const sftp = inject('sftp')
  it.skipIf(sftp === null)(`sftp${sftp === null ? ` — SKIPPED: ${inject('sftpWhy')}` : ''}`, async () => {
    if (sftp === null) return
    const raw = await RawSftp.connect(sftp)
    const base = await raw.freshDir(sftp.root, 'fence-')
    cleanups.push(async () => {
      await raw.rmrf(base)
      raw.close()
    })
    const root = await raw.freshDir(base, 'root-')
    await raw.mkdirp(`${root}/deep`)
    const out = await raw.freshDir(base, 'outside-')
    await raw.writeInPlace(`${out}/secret.txt`, Buffer.from(`${SECRET}\n`))
    await raw.symlink(`${root}/link-out`, out)
    await raw.symlink(`${root}/file-out`, `${out}/secret.txt`)
    const outside = async (): Promise<Record<string, string>> => {
      const entries: Record<string, string> = {}
      for (const name of await raw.names(base)) entries[name] = ''
      for (const name of await raw.names(out)) entries[`out/${name}`] = (await raw.read(`${out}/${name}`)).toString()
      return entries
    }
    const keyDir = mkdtempSync(join(tmpdir(), 'seamfs-fence-key-'))
    writeFileSync(join(keyDir, 'id'), sftp.privateKey, { mode: 0o600 })
    cleanups.push(async () => rmSync(keyDir, { recursive: true, force: true }))
    await attack({ backend: sftpBackend(sftp, root, join(keyDir, 'id')), addressable: true, hasOutside: true, outside })
  })
})
