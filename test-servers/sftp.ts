import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import type { Started } from './s3.js'

/** Coordinates of the SFTP server the tests use. */
export interface SftpServerInfo {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly privateKey: string
  /** SHA256 fingerprint of the host key, for pinning. */
  readonly hostKeySha256: string
  /** A directory the user owns, for the tests' roots. */
  readonly root: string
}

/**
 * The same server's chrooted user (OpenSSH `ChrootDirectory`): `root` is its
 * writable directory as the server shows it to that user (`/work`); `hostRoot`
 * is that directory on this machine, where a test can reach behind the jail.
 */
export interface SftpChrootInfo extends SftpServerInfo {
  /** The jail on this machine (root-owned; the user sees it as `/`). */
  readonly chroot: string
  readonly hostRoot: string
}

/** The boot script; also used by bench/src/ssh.ts. */
export const SFTP_SCRIPT = fileURLToPath(new URL('./sftp-server.sh', import.meta.url))
const SSHD = '/usr/sbin/sshd'

function run(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SFTP_SCRIPT, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${SFTP_SCRIPT} ${args[0]} failed: ${stderr.trim() || err.message}`))
      else resolve(stdout)
    })
  })
}

function missing(): string | undefined {
  if (!existsSync(SSHD)) return `${SSHD} is not installed (apt-get install openssh-server openssh-sftp-server)`
  if (process.getuid?.() !== 0) return 'booting sshd for the SFTP tests needs root (it switches to a test user)'
  return undefined
}

/** One sshd, two users: the plain one and the chrooted one. */
export interface SftpServers {
  readonly plain: SftpServerInfo
  readonly chroot: SftpChrootInfo
}

/** The output of `sftp-server.sh start`: its KEY=value lines. */
function parseEnv(out: string): (name: string) => string {
  const env = new Map(
    out
      .trim()
      .split('\n')
      .map((line) => {
        const at = line.indexOf('=')
        return [line.slice(0, at), line.slice(at + 1)] as const
      }),
  )
  return (name) => {
    const value = env.get(name)
    if (value === undefined) throw new Error(`${SFTP_SCRIPT} did not print ${name}`)
    return value
  }
}

function plainInfo(get: (name: string) => string): SftpServerInfo {
  return {
    host: get('SFTP_HOST'),
    port: Number(get('SFTP_PORT')),
    username: get('SFTP_USER'),
    privateKey: readFileSync(get('SFTP_KEY'), 'utf8'),
    hostKeySha256: get('SFTP_HOSTKEY_SHA256'),
    root: get('SFTP_ROOT'),
  }
}

/** A dedicated sshd of one test file: its coordinates, the PID of its listener, and how to stop it. */
export interface SftpInstance {
  readonly info: SftpServerInfo
  /** The listener's PID; each connection is served by its descendants (`sshd: user [priv]` → `user@notty` → `user@internal-sftp`). */
  readonly pid: number
  stop(): Promise<void>
}

/**
 * Boots one more sshd like the shared one (same script, own port, keys and directory), for a test
 * that freezes or kills server processes and must not do that to the shared server. Needs what
 * {@link startSftp} needs (the caller skips without the shared server). A watchdog stops it when
 * this process dies.
 */
export async function startSftpInstance(): Promise<SftpInstance> {
  const why = missing()
  if (why !== undefined) throw new Error(why)
  const dir = join(tmpdir(), `seamfs-sftp-${randomBytes(6).toString('hex')}`)
  const get = parseEnv(await run(['start', dir, String(process.pid)]))
  return { info: plainInfo(get), pid: Number(get('SFTP_PID')), stop: async () => void (await run(['stop', dir])) }
}

/**
 * Boots OpenSSH's sshd on 127.0.0.1 (a free port, its own config, throwaway
 * keys, the unprivileged user seamfs-sftp) with test-servers/sftp-server.sh,
 * and stops it by PID. Without the binaries it reports why, so the SFTP suites
 * skip and say so, except under CI=true, where that (or a failed boot) throws.
 */
export async function startSftp(): Promise<Started<SftpServers>> {
  const ci = process.env['CI'] === 'true'
  const why = missing()
  if (why !== undefined) {
    if (ci) throw new Error(`CI must run the SFTP suite, but ${why}`)
    return { why }
  }
  const dir = join(tmpdir(), `seamfs-sftp-${randomBytes(6).toString('hex')}`)
  let out: string
  try {
    out = await run(['start', dir, String(process.pid)])
  } catch (err) {
    if (ci) throw err
    return { why: err instanceof Error ? err.message : String(err) }
  }
  const get = parseEnv(out)
  const info = plainInfo(get)
  const jail = get('SFTP_CHROOT_DIR')
  const jailRoot = get('SFTP_CHROOT_ROOT')
  const chroot: SftpChrootInfo = { ...info, username: get('SFTP_CHROOT_USER'), root: jailRoot, chroot: jail, hostRoot: `${jail}${jailRoot}` }
  return {
    server: { info: { plain: info, chroot }, stop: async () => void (await run(['stop', dir])) },
    why: '',
  }
}
