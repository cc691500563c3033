/**
 * A second, raw ssh2 SFTP connection to the test server: the conformance
 * hooks change the store through it, behind the filesystem's back (in place,
 * as another client would), and tests inspect what is really on the server.
 */
import { randomBytes } from 'node:crypto'
import { posix } from 'node:path'
import { Client, type SFTPWrapper } from 'ssh2'
import { afterAll, beforeAll } from 'vitest'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'

type Cb<T> = (err?: Error | null, value?: T) => void

export class RawSftp {
  readonly client: Client
  readonly sftp: SFTPWrapper

  private constructor(client: Client, sftp: SFTPWrapper) {
    this.client = client
    this.sftp = sftp
  }

  static async connect(server: SftpServerInfo, port = server.port): Promise<RawSftp> {
    const client = new Client()
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve).once('error', reject)
      client.connect({ host: server.host, port, username: server.username, privateKey: server.privateKey })
    })
    client.on('error', () => undefined)
    const sftp = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))))
    return new RawSftp(client, sftp)
  }

  call<T = void>(send: (cb: Cb<T>) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => send((err, value) => (err ? reject(err) : resolve(value as T))))
  }

  /** A new empty directory under `parent`. */
  async freshDir(parent: string, prefix = 'c-'): Promise<string> {
    const dir = `${parent}/${prefix}${randomBytes(6).toString('hex')}`
    await this.call((cb) => this.sftp.mkdir(dir, cb))
    return dir
  }

  async mkdirp(dir: string): Promise<void> {
    try {
      await this.call((cb) => this.sftp.mkdir(dir, cb))
    } catch {
      const st = await this.call<{ isDirectory(): boolean }>((cb) => this.sftp.stat(dir, cb)).catch(() => undefined)
      if (st?.isDirectory() === true) return
      await this.mkdirp(posix.dirname(dir))
      await this.call((cb) => this.sftp.mkdir(dir, cb))
    }
  }

  /** Writes in place (open with truncate, same inode), creating parents. */
  async writeInPlace(path: string, bytes: Uint8Array): Promise<void> {
    await this.mkdirp(posix.dirname(path))
    await this.call((cb) => this.sftp.writeFile(path, Buffer.from(bytes), cb))
  }

  async read(path: string): Promise<Buffer> {
    return this.call<Buffer>((cb) => this.sftp.readFile(path, cb))
  }

  async unlink(path: string): Promise<void> {
    await this.call((cb) => this.sftp.unlink(path, cb))
  }

  async symlink(path: string, target: string): Promise<void> {
    await this.mkdirp(posix.dirname(path))
    // ssh2 takes (target, link) and swaps them for OpenSSH, whose server has the order reversed.
    await this.call((cb) => this.sftp.symlink(target, path, cb))
  }

  async names(dir: string): Promise<string[]> {
    const list = await this.call<{ filename: string }[]>((cb) => this.sftp.readdir(dir, cb))
    return list.map((e) => e.filename).sort()
  }

  async mode(path: string): Promise<number> {
    return (await this.call<{ mode: number }>((cb) => this.sftp.stat(path, cb))).mode & 0o777
  }

  async chmod(path: string, mode: number): Promise<void> {
    await this.call((cb) => this.sftp.chmod(path, mode, cb))
  }

  /** Removes `path` and everything below it. */
  async rmrf(path: string): Promise<void> {
    const st = await this.call<{ isDirectory(): boolean }>((cb) => this.sftp.lstat(path, cb)).catch(() => undefined)
    if (st === undefined) return
    if (!st.isDirectory()) return this.unlink(path)
    const list = await this.call<{ filename: string }[]>((cb) => this.sftp.readdir(path, cb))
    await Promise.all(list.map((e) => this.rmrf(`${path}/${e.filename}`)))
    await this.call((cb) => this.sftp.rmdir(path, cb))
  }

  close(): void {
    this.client.end()
  }
}

/** What {@link suiteScratch} hands a suite: a raw connection and the suite's own fresh directory. */
export interface Scratch {
  readonly raw: RawSftp
  readonly base: string
}

/**
 * Registers the hooks of a suite's scratch space on the test server: before the suite, a raw
 * connection and a fresh directory named `prefix…` (given to `ready`); after it, the directory
 * removed (`beforeRemove` first, e.g. to make read-only parts removable) and the connection closed.
 * Nothing happens without a server (the suite skips).
 */
export function suiteScratch(server: SftpServerInfo | null, prefix: string, ready: (scratch: Scratch) => void, beforeRemove?: (base: string) => void): void {
  let scratch: Scratch | undefined
  beforeAll(async () => {
    if (server === null) return
    const raw = await RawSftp.connect(server)
    scratch = { raw, base: await raw.freshDir(server.root, prefix) }
    ready(scratch)
  })
  afterAll(async () => {
    if (scratch === undefined) return
    beforeRemove?.(scratch.base)
    await scratch.raw.rmrf(scratch.base)
    scratch.raw.close()
  })
}
