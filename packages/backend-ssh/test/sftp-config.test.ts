/**
 * The SFTP config and its `sftp://` form: a host-key pin in the URL (with `+`, `/`, `=` raw or
 * %-encoded), known_hosts and the insecure flag, only the documented query keys, `newFileMode`,
 * and never a password in a message whatever characters it holds. The live part mounts the test
 * sshd the way a user's URL would.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { isConfigError, isFsError, redactUrl, type ConfigError } from '@seamfs/core/backend'
import { sftpBackend, type SftpConfig } from '@seamfs/backend-ssh/config'
import { mountError, titled } from './helpers.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
const PIN = 'SHA256:ab+cd/efgh+ij/kl0123456789ABCDEFGHIJKLMNOPQ'
const QUERY_KEYS = 'key, passwordEnv, agent, hostKeySha256, knownHostsFile, insecureAcceptAnyHostKey, newFileMode'
const SPECIALS = ['/', '@', ':', '?', '#', '%', '/@:?#%', 'a/b@c:d?e#f%g', '%40', '&x=', '=', ' ']
const SECRETS = SPECIALS.map((c) => `Zq9x${c}Wv7y`)

/** Runs `fn`, expects a ConfigError, returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    if (isConfigError(err)) return err
    throw err
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

const fromUrl = (spec: string): SftpConfig => sftpBackend.fromUrl(spec, '--fs')

describe('sftp:// URLs', () => {
  it('carry a host-key pin: + / = raw or %-encoded', () => {
    expect(PIN).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/)
    for (const pin of [PIN, encodeURIComponent(PIN), PIN.replaceAll('+', '%2B').replaceAll('/', '%2F')]) {
      expect(fromUrl(`sftp://u@h:2222/srv?hostKeySha256=${pin}&key=~/.ssh/id`)).toEqual({
        type: 'sftp',
        host: 'h',
        port: 2222,
        username: 'u',
        root: '/srv',
        privateKeyFile: '~/.ssh/id',
        hostKeySha256: PIN,
      })
    }
    expect(fromUrl(`sftp://u@h/?hostKeySha256=${PIN}=`).hostKeySha256).toBe(`${PIN}=`)
  })

  it('carry known_hosts, the insecure flag, an agent socket and newFileMode', () => {
    expect(fromUrl('sftp://u@h/?knownHostsFile=~/kh&agent=/run/a.sock&newFileMode=0640&passwordEnv=PW')).toEqual({
      type: 'sftp',
      host: 'h',
      username: 'u',
      knownHostsFile: '~/kh',
      agent: '/run/a.sock',
      newFileMode: 0o640,
      passwordEnv: 'PW',
    })
    const insecure = fromUrl('sftp://u@h:2222/srv?insecureAcceptAnyHostKey=true')
    expect(insecure.insecureAcceptAnyHostKey).toBe(true)
    expect(sftpBackend.describe(insecure)).toBe('sftp://u@h:2222/srv (INSECURE: any host key accepted)')
    expect(sftpBackend.describe(fromUrl('sftp://u@h:2222/srv?insecureAcceptAnyHostKey=false'))).toBe('sftp://u@h:2222/srv')
  })

  it.each<[spec: string, key: string, message: string]>([
    ['sftp://u@h/?hostKeySha256=wFoFLyp0O2LGylEUNH6TGqJwavuoo3qH0D', '--fs.hostKeySha256', 'expected a fingerprint as ssh-keygen -l -E sha256 prints it'],
    ['sftp://u@h/?hostKeySha256=SHA256:short', '--fs.hostKeySha256', 'expected a fingerprint'],
    [
      `sftp://u@h/?insecureAcceptAnyHostKey=true&hostKeySha256=${PIN}`,
      '--fs.insecureAcceptAnyHostKey',
      'expected no hostKeySha256 or knownHostsFile beside it',
    ],
    ['sftp://u@h/?insecureAcceptAnyHostKey=yes', '--fs.insecureAcceptAnyHostKey', 'expected true or false, found the string "yes"'],
    ['sftp://u@h/?insecureAcceptAnyHostKey', '--fs.insecureAcceptAnyHostKey', 'expected true or false, found the string ""'],
    ['sftp://u@h/?newFileMode=0999', '--fs.newFileMode', 'expected permission bits as an octal string'],
    ['sftp://u@h/?strictHostKeyChecking=no', '--fs', `expected only the query keys ${QUERY_KEYS}, found the unknown query key "strictHostKeyChecking"`],
    ['sftp://u@h/?key=a&key=b', '--fs', 'expected each query key at most once, found the query key "key" twice'],
    ['sftp://u@h/a%zz', '--fs', 'expected valid %-escapes in the URL, found the string "sftp://u@h/a%zz"'],
  ])('%s is refused', (spec, key, message) => {
    const err = configError(() => fromUrl(spec))
    expect(err.key).toBe(key)
    expect(err.message).toContain(message)
  })

  it.each(SECRETS)('never print the password %s, wherever it is put', (secret) => {
    for (const s of [secret, encodeURIComponent(secret)]) {
      for (const spec of [
        `sftp://user:${s}@host/srv`,
        `sftp://user:${s}@host:2222/srv?key=~/.ssh/id`,
        `sftp://:${s}@host`,
        `sftp://user:123${s}@host/srv`,
        `sftp://user@host/srv?password=${s}`,
        `sftp://user@host/srv?key=~/id&token=${s}`,
        `sftp://host/srv?privateKey=${s}`,
        `sftp://user@host/srv#${s}`,
      ]) {
        const err = configError(() => fromUrl(spec))
        for (const text of [err.message, redactUrl(spec)]) {
          expect(text).not.toContain(s)
          expect(text).not.toContain('Zq9x')
          expect(text).not.toContain('Wv7y')
        }
      }
      expect(configError(() => sftpBackend.parseConfig({ type: 'sftp', host: 'h', username: 'u', password: s }, 'backend')).message).not.toContain('Wv7y')
    }
  })

  it('newFileMode in a JSON config is an octal string; a number is refused', () => {
    expect(sftpBackend.parseConfig({ type: 'sftp', host: 'h', username: 'u', newFileMode: '0644' }, 'backend').newFileMode).toBe(0o644)
    expect(configError(() => sftpBackend.parseConfig({ type: 'sftp', host: 'h', username: 'u', newFileMode: 600 }, 'backend')).key).toBe('backend.newFileMode')
  })
})

describe.skipIf(server === null)(titled('sftp:// URLs on the live sshd', server, inject('sftpWhy')), () => {
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-sftp-config-'))
  const keyFile = join(dir, 'id')
  let raw: RawSftp
  let root = ''
  let spec = ''
  afterAll(async () => {
    await raw?.rmrf(root)
    raw?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  beforeAll(async () => {
    const s = server
    if (s === null) return
    writeFileSync(keyFile, s.privateKey, { mode: 0o600 })
    raw = await RawSftp.connect(s)
    root = await raw.freshDir(s.root, 'config-')
    spec = `sftp://${s.username}@${s.host}:${s.port}${root}?key=${keyFile}`
  })

  /** Opens `url` as the CLI would and lists the root: undefined when that worked, else the error. */
  const mount = (url: string, env: Record<string, string> = {}): Promise<unknown> => mountError(fromUrl(url), env, dir)

  it('a good pin connects, raw or %-encoded; a wrong one is refused', async () => {
    const pin = server!.hostKeySha256
    expect(await mount(`${spec}&hostKeySha256=${pin}`)).toBeUndefined()
    expect(await mount(`${spec}&hostKeySha256=${encodeURIComponent(pin)}`)).toBeUndefined()
    const err = await mount(`${spec}&hostKeySha256=${PIN}`)
    expect(err).toMatchObject({ code: 'FS_IO_ERROR', retryable: false })
    expect((err as Error).message).toContain(`not the pinned hostKeySha256 ${PIN}`)
  })

  it('no pin: known_hosts decides; its default is ~/.ssh/known_hosts; the insecure flag accepts any key', async () => {
    const s = server!
    const name = `[${s.host}]:${s.port}`
    const err = await mount(`${spec}&knownHostsFile=${join(dir, 'id.pub-absent')}`)
    expect(isConfigError(err) && err.message).toBe(
      `config: backend.knownHostsFile: expected an existing known_hosts file, found the string "${join(dir, 'id.pub-absent')}"`,
    )
    const home = join(dir, 'home')
    mkdirSync(join(home, '.ssh'), { recursive: true })
    const saved = process.env['HOME']
    process.env['HOME'] = home
    try {
      const unknown = await mount(spec)
      expect(isFsError(unknown) && unknown.message).toContain(
        `${name} is not in ${join(home, '.ssh', 'known_hosts')}; the server sent the ssh-ed25519 key ${s.hostKeySha256}`,
      )
      expect(await mount(`${spec}&insecureAcceptAnyHostKey=true`)).toBeUndefined()
    } finally {
      process.env['HOME'] = saved
    }
    const { execFileSync } = await import('node:child_process')
    const scanned = execFileSync('ssh-keyscan', ['-H', '-p', String(s.port), s.host], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] })
    writeFileSync(join(dir, 'known_hosts'), scanned)
    expect(await mount(`${spec}&knownHostsFile=known_hosts`)).toBeUndefined()
  })

  it('newFileMode sets the mode of new files', async () => {
    const fs = await sftpBackend.open(fromUrl(`${spec}&hostKeySha256=${server!.hostKeySha256}&newFileMode=0640`), {}, dir)
    try {
      await fs.writeText(await fs.resolve('m.txt'), 'mode\n')
    } finally {
      await fs.close()
    }
    expect(await raw.mode(`${root}/m.txt`)).toBe(0o640)
  })
})
