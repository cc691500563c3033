/**
 * Host-key verification, as OpenSSH's strict checking does it: known_hosts names are matched as
 * OpenSSH matches them (checked against `ssh-keygen -F` itself, hashed names made by `ssh-keygen
 * -H`), and against the live sshd an unknown host, a changed key, a revoked key and a wrong pin
 * are refused with the fingerprint and the remedy, while a pin or a known_hosts entry (made by
 * `ssh-keyscan`) connects. Accepting any key needs `acceptAnyHostKey`.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { isFsError, type FsError } from '@seamfs/core/backend'
import { SftpFileSystem, type SftpFileSystemOptions } from '@seamfs/backend-ssh'
import { checkKnownHosts, hostFieldMatches, knownHostName, parseKnownHosts, sha256Fingerprint } from '../src/known-hosts.js'
import { titled } from './helpers.js'

const server = inject('sftp')
const dir = mkdtempSync(join(tmpdir(), 'seamfs-host-keys-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs an OpenSSH tool, bounded in time. */
const tool = (file: string, args: readonly string[]): string =>
  execFileSync(file, args, { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] })

/** A fresh public key of `type`, as a known_hosts line's `type base64` part. */
function newKey(type: 'ed25519' | 'ecdsa'): string {
  const file = join(dir, `k-${type}-${Math.random().toString(36).slice(2)}`)
  tool('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', '', '-f', file])
  return readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
}

/** Writes a known_hosts file; returns its path. */
function knownHosts(name: string, lines: readonly string[]): string {
  const file = join(dir, name)
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''))
  return file
}

describe('known_hosts names match as OpenSSH matches them', () => {
  it('for each name, the same lines as `ssh-keygen -F` finds', () => {
    const k = newKey('ed25519')
    const hashedSource = knownHosts('to-hash', [`hashed.example ${k}`, `[hashed.example]:2200 ${k}`])
    tool('ssh-keygen', ['-q', '-H', '-f', hashedSource])
    const hashed = readFileSync(hashedSource, 'utf8').trim().split('\n')
    expect(hashed.every((l) => l.startsWith('|1|'))).toBe(true)
    const lines = [
      `a.example.com,b.example.com ${k}`,
      `[a.example.com]:2222 ${k}`,
      `*.wild.org,!bad.wild.org ${k}`,
      `h?st.test ${k}`,
      `10.0.0.*,!10.0.0.7 ${k}`,
      `[*.port.net]:* ${k}`,
      `UPPER.example.org ${k}`,
      ...hashed,
    ]
    const file = knownHosts('oracle', lines)
    const names = [
      'a.example.com',
      'b.example.com',
      'c.example.com',
      '[a.example.com]:2222',
      '[a.example.com]:2223',
      'x.wild.org',
      'bad.wild.org',
      'wild.org',
      'host.test',
      'hoost.test',
      '10.0.0.1',
      '10.0.0.7',
      '[x.port.net]:2222',
      'x.port.net',
      'upper.example.org',
      'hashed.example',
      '[hashed.example]:2200',
      '[hashed.example]:2201',
    ]
    const parsed = parseKnownHosts(readFileSync(file, 'utf8'))
    expect(parsed).toHaveLength(lines.length)
    for (const name of names) {
      let out = ''
      try {
        out = tool('ssh-keygen', ['-F', name, '-f', file])
      } catch (err) {
        // Exit status 1: not found.
        if ((err as { status?: number }).status !== 1) throw err
      }
      const theirs = [...out.matchAll(/^# Host .* found: line (\d+)/gm)].map((m) => Number(m[1]))
      const ours = parsed.filter((e) => hostFieldMatches(e.hosts, name)).map((e) => e.line)
      expect({ name, lines: ours }).toEqual({ name, lines: theirs })
    }
  })

  it('the name of a host is lower case, bracketed with its port unless it is 22', () => {
    expect(knownHostName('Files.Example.COM', 22)).toBe('files.example.com')
    expect(knownHostName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222')
  })

  it('comments, blank, malformed and @cert-authority lines are skipped; @revoked is kept', () => {
    const k = newKey('ed25519')
    const parsed = parseKnownHosts(
      [
        '# a comment',
        '',
        `@cert-authority *.example.com ${k}`,
        'broken.example ssh-ed25519 !!!notbase64',
        `mistyped.example ssh-rsa ${k.split(' ')[1] ?? ''}`,
        `@revoked bad.example ${k}`,
        `  good.example ${k} a comment`,
      ].join('\n'),
    )
    expect(parsed.map((e) => [e.hosts, e.revoked, e.line])).toEqual([
      ['bad.example', true, 6],
      ['good.example', false, 7],
    ])
  })

  it('the verdicts: known, unknown, changed, revoked, other types only', () => {
    const [mine, other, ecdsa] = [newKey('ed25519'), newKey('ed25519'), newKey('ecdsa')]
    const blob = (k: string): Buffer => Buffer.from(k.split(' ')[1] ?? '', 'base64')
    const key = blob(mine)
    const fp = sha256Fingerprint(key)
    const verdict = (lines: readonly string[]): string | undefined =>
      checkKnownHosts(parseKnownHosts(lines.join('\n')), key, { host: 'h.example', port: 22, file: 'KH' })
    expect(verdict([`h.example ${mine}`])).toBeUndefined()
    expect(verdict([`x.example ${mine}`])).toMatch(
      new RegExp(`^host key verification failed: h\\.example is not in KH; the server sent the ssh-ed25519 key ${escape(fp)}\\. Refused\\.`),
    )
    expect(verdict([`h.example ${other}`])).toMatch(/THE HOST KEY OF h\.example HAS CHANGED.*KH \(line 1\)/)
    expect(verdict([`h.example ${mine}`, `@revoked * ${mine}`])).toBe(
      `host key verification failed: the ssh-ed25519 host key ${fp} of h.example is marked @revoked in KH (line 2); refused`,
    )
    expect(verdict([`h.example ${ecdsa}`])).toMatch(/h\.example has no ssh-ed25519 key in KH \(only ecdsa-sha2-nistp256\)/)
    expect(sha256Fingerprint(blob(mine))).toBe(tool('ssh-keygen', ['-l', '-E', 'sha256', '-f', knownHosts('fp', [`h ${mine}`])]).split(' ')[1])
  })
})

/** A regular expression matching `text` literally. */
function escape(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
}

describe.skipIf(server === null)(titled('host keys against the live sshd', server, inject('sftpWhy')), () => {
  let name = ''
  let serverKey = ''
  const base = (): SftpFileSystemOptions => ({
    host: server!.host,
    port: server!.port,
    username: server!.username,
    privateKey: server!.privateKey,
    root: server!.root,
  })

  /** Connects with `options`; the FsError it fails with, or undefined when it connected. */
  async function attempt(options: Partial<SftpFileSystemOptions>): Promise<FsError | undefined> {
    const fs = new SftpFileSystem({ ...base(), ...options })
    try {
      await fs.connect()
      return undefined
    } catch (err) {
      if (!isFsError(err)) throw err
      return err
    } finally {
      await fs.close()
    }
  }

  /** The refusal of `options`: FS_IO_ERROR, not retryable; its reason after `cannot resolve "<root>": `. */
  async function refusal(options: Partial<SftpFileSystemOptions>): Promise<string> {
    const err = await attempt(options)
    expect(err).toMatchObject({ code: 'FS_IO_ERROR', retryable: false })
    const prefix = `cannot resolve "${server!.root}": `
    expect(err!.message.startsWith(prefix)).toBe(true)
    return err!.message.slice(prefix.length)
  }

  beforeAll(() => {
    if (server === null) return
    name = `[${server.host}]:${server.port}`
    const scanned = tool('ssh-keyscan', ['-t', 'ed25519', '-p', String(server.port), server.host]).trim()
    expect(scanned.startsWith(`${name} ssh-ed25519 `)).toBe(true)
    serverKey = scanned.split(' ').slice(1, 3).join(' ')
  })

  it('a good pin connects; a wrong pin is refused, naming both fingerprints', async () => {
    expect(await attempt({ hostKeySha256: server!.hostKeySha256 })).toBeUndefined()
    const wrong = sha256Fingerprint(Buffer.from('not the key'))
    expect(await refusal({ hostKeySha256: wrong })).toBe(
      `host key verification failed: ${server!.host}:${server!.port} sent the ssh-ed25519 key ${server!.hostKeySha256}, not the pinned hostKeySha256 ${wrong}; ` +
        'refused (the pin is wrong, or someone is intercepting the connection)',
    )
  })

  it('without a pin, a known_hosts entry connects: as ssh-keyscan writes it, hashed, or by wildcard', async () => {
    expect(await attempt({ knownHostsFile: knownHosts('scanned', [`${name} ${serverKey}`]) })).toBeUndefined()
    const hashed = tool('ssh-keyscan', ['-H', '-t', 'ed25519', '-p', String(server!.port), server!.host]).trim()
    expect(hashed.startsWith('|1|')).toBe(true)
    expect(await attempt({ knownHostsFile: knownHosts('hashed', [hashed]) })).toBeUndefined()
    expect(await attempt({ knownHostsFile: knownHosts('wild', [`other.example ${newKey('ed25519')}`, `[127.0.0.*]:* ${serverKey}`]) })).toBeUndefined()
    // A known ecdsa key of another host does not get in the way; one for this host is asked for first, and is not this key.
    expect(await attempt({ knownHostsFile: knownHosts('mixed', [`${name} ${newKey('ecdsa')}`, `${name} ${serverKey}`]) })).toBeUndefined()
  })

  it('an unknown host is refused with its key type, fingerprint and how to pin it', async () => {
    const file = knownHosts('empty', [])
    const fp = server!.hostKeySha256
    expect(await refusal({ knownHostsFile: file })).toBe(
      `host key verification failed: ${name} is not in ${file}; the server sent the ssh-ed25519 key ${fp}. Refused. ` +
        "If that is the server's key (check it on the server: ssh-keygen -l -E sha256 -f /etc/ssh/ssh_host_*_key.pub), pin it: " +
        `"hostKeySha256": "${fp}" in the config, ?hostKeySha256=${fp} in an sftp:// URL, the hostKeySha256 option; ` +
        `or add it to the known_hosts file (ssh-keyscan -p ${server!.port} ${server!.host} >> ~/.ssh/known_hosts, then compare the fingerprint)`,
    )
    // Negated, for another port only, or a missing file: unknown all the same.
    expect(await refusal({ knownHostsFile: knownHosts('negated', [`[127.0.0.*]:*,!${name} ${serverKey}`]) })).toMatch(/is not in/)
    expect(await refusal({ knownHostsFile: knownHosts('port', [`${server!.host} ${serverKey}`, `[${server!.host}]:1 ${serverKey}`]) })).toMatch(/is not in/)
    expect(await refusal({ knownHostsFile: join(dir, 'missing') })).toMatch(/is not in .*missing; /)
    expect(await refusal({ knownHostsFile: knownHosts('ca', [`@cert-authority ${name} ${serverKey}`]) })).toMatch(/is not in/)
    expect(await refusal({ knownHostsFile: knownHosts('ecdsa-only', [`${name} ${newKey('ecdsa')}`]) })).toMatch(
      new RegExp(`^host key verification failed: ${escape(name)} has no ssh-ed25519 key in .* \\(only ecdsa-sha2-nistp256\\)`),
    )
  })

  it('a known host with another key is refused loudly', async () => {
    const old = newKey('ed25519')
    const file = knownHosts('changed', ['# first line', `${name} ${old}`])
    const oldFp = sha256Fingerprint(Buffer.from(old.split(' ')[1] ?? '', 'base64'))
    expect(await refusal({ knownHostsFile: file })).toBe(
      `host key verification failed: WARNING: THE HOST KEY OF ${name} HAS CHANGED; someone may be intercepting the connection ` +
        `(man-in-the-middle), or the server's key was replaced. The server sent the ssh-ed25519 key ${server!.hostKeySha256}; ${file} (line 2) ` +
        `holds ${oldFp} for it. Refused. If the change is expected, remove the old entry (ssh-keygen -R '${name}' -f ${file}) ` +
        'and record the new key once you have checked it.',
    )
  })

  it('a revoked key is refused even when also listed as known', async () => {
    const file = knownHosts('revoked', [`${name} ${serverKey}`, `@revoked ${name} ${serverKey}`])
    expect(await refusal({ knownHostsFile: file })).toBe(
      `host key verification failed: the ssh-ed25519 host key ${server!.hostKeySha256} of ${name} is marked @revoked in ${file} (line 2); refused`,
    )
  })

  it('the default file is ~/.ssh/known_hosts; an unreadable file is refused', async () => {
    const home = join(dir, 'home')
    mkdirSync(join(home, '.ssh'), { recursive: true })
    const saved = process.env['HOME']
    process.env['HOME'] = home
    try {
      expect(await refusal({})).toMatch(new RegExp(`is not in ${escape(join(home, '.ssh', 'known_hosts'))};`))
      writeFileSync(join(home, '.ssh', 'known_hosts'), `${name} ${serverKey}\n`)
      expect(await attempt({})).toBeUndefined()
    } finally {
      process.env['HOME'] = saved
    }
    expect(await refusal({ knownHostsFile: dir })).toBe(`host key verification failed: cannot read the known_hosts file ${dir} (EISDIR)`)
  })

  it('acceptAnyHostKey connects unchecked; it cannot be combined with a pin; a malformed pin is refused', async () => {
    expect(await attempt({ acceptAnyHostKey: true, knownHostsFile: undefined })).toBeUndefined()
    expect(() => new SftpFileSystem({ ...base(), acceptAnyHostKey: true, hostKeySha256: server!.hostKeySha256 })).toThrow(TypeError)
    expect(() => new SftpFileSystem({ ...base(), hostKeySha256: 'wFoFLyp0O2LGylEUNH6TGqJwavuoo3qH0D+/uSakKx4' })).toThrow(/SHA256:/)
    // A pre-connected client is the caller's to check: no known_hosts involved.
  })

  it('hostVerifier refusing is refused; a throwing one too', async () => {
    expect(await refusal({ hostVerifier: () => false })).toBe(
      `host key verification failed: hostVerifier refused the ssh-ed25519 key ${server!.hostKeySha256} of ${server!.host}:${server!.port}`,
    )
    expect(
      await refusal({
        hostVerifier: () => {
          throw new Error('boom')
        },
      }),
    ).toMatch(/hostVerifier refused/)
    // From JavaScript an async verifier returns a Promise, which is truthy: only `true` accepts.
    const asyncVerifier = (async () => false) as unknown as (key: Buffer) => boolean
    expect(await refusal({ hostVerifier: asyncVerifier })).toMatch(/hostVerifier refused/)
  })
})
