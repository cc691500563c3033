/**
 * Host-key verification, as OpenSSH's `StrictHostKeyChecking yes` does it: the
 * server's key is checked against a pin (`hostKeySha256`, `hostVerifier`) or
 * else against an OpenSSH known_hosts file. Nothing here prompts or writes the
 * file: an unknown host is refused with what to pin.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { ServerHostKeyAlgorithm } from 'ssh2'
import { errorCodeOf } from '@seamfs/core/backend'
import { ConnectionFailure } from './errors.js'

/** One usable line of a known_hosts file (`@cert-authority` lines are skipped: ssh2 checks no certificates). */
export interface KnownHost {
  readonly revoked: boolean
  /** The host field: a comma list of patterns, or one hashed name `|1|salt|hmac`. */
  readonly hosts: string
  /** The key blob, as the server sends it. */
  readonly key: Buffer
  /** 1-based line number, for messages. */
  readonly line: number
}

/** The options that choose how a server's host key is checked. */
export interface HostKeyOptions {
  readonly host?: string | undefined
  readonly port: number
  readonly hostKeySha256?: string | undefined
  readonly hostVerifier?: ((key: Buffer) => boolean) | undefined
  readonly knownHostsFile?: string | undefined
  readonly acceptAnyHostKey?: boolean | undefined
}

/** Checks a host key blob: undefined accepts it, a string says why it is refused. */
export type HostKeyCheck = (key: Buffer) => string | undefined

/** How one connection checks the host key, and the key algorithms to ask for first (those known_hosts knows for the host). */
export interface HostKeyPolicy {
  readonly check: HostKeyCheck | undefined
  readonly preferred: readonly ServerHostKeyAlgorithm[]
}

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/

/** The default known_hosts file: `~/.ssh/known_hosts`. */
export const defaultKnownHostsFile = (): string => join(homedir(), '.ssh', 'known_hosts')

/** Whether `value` is a fingerprint as `ssh-keygen -l -E sha256` prints it (`SHA256:` + 43 base64 characters). */
export const isSha256Fingerprint = (value: string): boolean => FINGERPRINT.test(value)

/** `SHA256:<base64, unpadded>` of a host key blob, as `ssh-keygen -l -E sha256` prints it. */
export function sha256Fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}

/** The key type a blob names in its first field (`ssh-ed25519`, `ssh-rsa`…). */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown'
  const length = blob.readUInt32BE(0)
  return length > 0 && length <= 64 && blob.length >= 4 + length ? blob.toString('latin1', 4, 4 + length) : 'unknown'
}

/** The name known_hosts lists a server under: `host` on port 22, else `[host]:port`; lower case. */
export function knownHostName(host: string, port: number): string {
  const name = host.toLowerCase()
  return port === 22 ? name : `[${name}]:${port}`
}

/** Parses a known_hosts file; comments, blank, malformed and `@cert-authority` lines are skipped. */
export function parseKnownHosts(text: string): KnownHost[] {
  const out: KnownHost[] = []
  text.split('\n').forEach((raw, i) => {
    const fields = raw.trim().split(/\s+/)
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return
    const marker = fields[0].startsWith('@') ? fields.shift() : undefined
    if (marker !== undefined && marker !== '@revoked') return
    const [hosts, type, base64] = fields
    if (hosts === undefined || type === undefined || base64 === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return
    const key = Buffer.from(base64, 'base64')
    if (keyTypeOf(key) !== type) return
    out.push({ revoked: marker === '@revoked', hosts, key, line: i + 1 })
  })
  return out
}

/** An OpenSSH host pattern (`*` any run, `?` one character) against `name`, ignoring case. */
function patternMatches(pattern: string, name: string): boolean {
  const source = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('')
  return new RegExp(`^${source}$`, 'is').test(name)
}

/** `|1|base64(salt)|base64(HMAC-SHA1(salt, name))` against `name`. */
function hashedMatches(hashed: string, name: string): boolean {
  const [, magic, salt, mac] = hashed.split('|')
  if (magic !== '1' || salt === undefined || mac === undefined) return false
  const expected = Buffer.from(mac, 'base64')
  const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest()
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** Whether a host field names `name`: a hashed name, or a comma list where a matching `!pattern` excludes the line. */
export function hostFieldMatches(hosts: string, name: string): boolean {
  if (hosts.startsWith('|')) return hashedMatches(hosts, name)
  let matched = false
  for (const pattern of hosts.split(',')) {
    if (pattern.startsWith('!')) {
      if (patternMatches(pattern.slice(1), name)) return false
    } else if (pattern !== '' && patternMatches(pattern, name)) matched = true
  }
  return matched
}

/** How to pin or record a key: the remedy every refusal of an unknown key ends with. */
function howToPin(host: string, port: number, fingerprint: string): string {
  const scan = `ssh-keyscan${port === 22 ? '' : ` -p ${port}`} ${host} >> ~/.ssh/known_hosts`
  return (
    `If that is the server's key (check it on the server: ssh-keygen -l -E sha256 -f /etc/ssh/ssh_host_*_key.pub), pin it: ` +
    `"hostKeySha256": "${fingerprint}" in the config, ?hostKeySha256=${fingerprint} in an sftp:// URL, the hostKeySha256 option; ` +
    `or add it to the known_hosts file (${scan}, then compare the fingerprint)`
  )
}

/** The server a host key came from (`host:port`), and the known_hosts file its messages name. */
export interface KeyFrom {
  readonly host: string
  readonly port: number
  readonly file: string
}

/**
 * The verdict of `known` (the lines of `file`) on the key `key` of `host:port`, as OpenSSH's
 * strict checking gives it: a matching `@revoked` line refuses; a matching key accepts; another
 * key of the same type for the host is a changed key (refused loudly); otherwise the host is
 * unknown for this key type (refused).
 */
export function checkKnownHosts(known: readonly KnownHost[], key: Buffer, { host, port, file }: KeyFrom): string | undefined {
  const name = knownHostName(host, port)
  const lines = known.filter((k) => hostFieldMatches(k.hosts, name))
  const type = keyTypeOf(key)
  const fingerprint = sha256Fingerprint(key)
  const revoked = lines.find((k) => k.revoked && k.key.equals(key))
  if (revoked !== undefined) {
    return `host key verification failed: the ${type} host key ${fingerprint} of ${name} is marked @revoked in ${file} (line ${revoked.line}); refused`
  }
  if (lines.some((k) => !k.revoked && k.key.equals(key))) return undefined
  const old = lines.find((k) => !k.revoked && keyTypeOf(k.key) === type)
  if (old !== undefined) {
    return (
      `host key verification failed: WARNING: THE HOST KEY OF ${name} HAS CHANGED; someone may be intercepting the connection ` +
      `(man-in-the-middle), or the server's key was replaced. The server sent the ${type} key ${fingerprint}; ${file} (line ${old.line}) ` +
      `holds ${sha256Fingerprint(old.key)} for it. Refused. If the change is expected, remove the old entry ` +
      `(ssh-keygen -R '${name}' -f ${file}) and record the new key once you have checked it.`
    )
  }
  const others = [...new Set(lines.filter((k) => !k.revoked).map((k) => keyTypeOf(k.key)))]
  const status = others.length === 0 ? `is not in ${file}` : `has no ${type} key in ${file} (only ${others.join(', ')})`
  return `host key verification failed: ${name} ${status}; the server sent the ${type} key ${fingerprint}. Refused. ${howToPin(host, port, fingerprint)}`
}

/** ssh2 host key algorithms per key type; known_hosts' types are asked for first, so a known key is the one offered. */
const ALGORITHMS: Readonly<Record<string, readonly ServerHostKeyAlgorithm[]>> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
}

/** Reads a known_hosts file; a missing one is empty (every host unknown). */
async function readKnownHosts(file: string): Promise<KnownHost[]> {
  try {
    return parseKnownHosts(await readFile(file, 'utf8'))
  } catch (err) {
    if (errorCodeOf(err) === 'ENOENT') return []
    const reason = `host key verification failed: cannot read the known_hosts file ${file} (${errorCodeOf(err) ?? String(err)})`
    throw new ConnectionFailure({ code: 'FS_IO_ERROR', reason }, err)
  }
}

/**
 * How to check the host key for one connection: not at all with
 * `acceptAnyHostKey`; against `hostKeySha256` and/or `hostVerifier` when given;
 * otherwise against the known_hosts file, read now (so edits to it count on
 * the next connection).
 */
export async function hostKeyPolicy(o: HostKeyOptions): Promise<HostKeyPolicy> {
  const where = o.host?.includes(':') === true ? `[${o.host}]:${o.port}` : `${o.host ?? ''}:${o.port}`
  if (o.acceptAnyHostKey === true) return { check: undefined, preferred: [] }
  if (o.hostKeySha256 !== undefined || o.hostVerifier !== undefined) {
    const pin = o.hostKeySha256?.replace(/=+$/, '')
    const verifier = o.hostVerifier
    return {
      preferred: [],
      check: (key) => {
        const fingerprint = sha256Fingerprint(key)
        if (pin !== undefined && fingerprint !== pin) {
          return (
            `host key verification failed: ${where} sent the ${keyTypeOf(key)} key ${fingerprint}, not the pinned hostKeySha256 ${pin}; ` +
            'refused (the pin is wrong, or someone is intercepting the connection)'
          )
        }
        let ok: boolean
        try {
          // Exactly `true`: a Promise (an async verifier from JavaScript) or any other truthy value is a refusal.
          ok = verifier === undefined || verifier(key) === true
        } catch {
          ok = false
        }
        return ok ? undefined : `host key verification failed: hostVerifier refused the ${keyTypeOf(key)} key ${fingerprint} of ${where}`
      },
    }
  }
  const file = o.knownHostsFile ?? defaultKnownHostsFile()
  const known = await readKnownHosts(file)
  const host = o.host ?? ''
  const name = knownHostName(host, o.port)
  const types = new Set(known.filter((k) => !k.revoked && hostFieldMatches(k.hosts, name)).map((k) => keyTypeOf(k.key)))
  return {
    check: (key) => checkKnownHosts(known, key, { host, port: o.port, file }),
    preferred: [...types].flatMap((t) => ALGORITHMS[t] ?? []),
  }
}

/** Refuses contradictory or malformed host-key options (a programming error: thrown by the constructor). */
export function checkHostKeyOptions(o: Omit<HostKeyOptions, 'port'>): void {
  if (o.hostKeySha256 !== undefined && !isSha256Fingerprint(o.hostKeySha256)) {
    throw new TypeError('hostKeySha256 must be a fingerprint as ssh-keygen -l -E sha256 prints it: SHA256: and 43 base64 characters')
  }
  if (o.acceptAnyHostKey === true && (o.hostKeySha256 !== undefined || o.hostVerifier !== undefined || o.knownHostsFile !== undefined)) {
    throw new TypeError('acceptAnyHostKey cannot be combined with hostKeySha256, hostVerifier or knownHostsFile')
  }
}
