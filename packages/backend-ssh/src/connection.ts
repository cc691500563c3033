import { performance } from 'node:perf_hooks'
import { Client, type ConnectConfig, type FileEntryWithStats, type InputAttributes, type SFTPWrapper, type Stats } from 'ssh2'
import { abortedError, type FsVerb } from '@seamfs/core/backend'
import { ConnectionFailure, LostAnswer, SessionGone, STATUS, statusOf, UnsupportedRequest } from './errors.js'
import { hostKeyPolicy, type HostKeyOptions } from './known-hosts.js'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './options.js'

export { sha256Fingerprint } from './known-hosts.js'

/** Bytes per READ / WRITE request: well under OpenSSH's 255 KiB limit and ssh2's default. */
const CHUNK = 64 * 1024
/** Requests kept in flight by one transfer (ssh2's channel window is 2 MiB). */
const READ_CONCURRENCY = 32
const WRITE_CONCURRENCY = 16
/** Content up to this size is sent by `writeAll` before it returns: requests sent after it queue behind the writes. */
export const WRITE_AT_ONCE_BYTES = CHUNK * WRITE_CONCURRENCY

type Callback<T> = (err?: Error | null, value?: T) => void

/** The longest delay `setTimeout` takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** The attrs of an SFTP reply that seamfs uses (SFTP v3: whole-second times, no inode, no ctime). */
export type Attrs = Stats

/** Open flags as SFTP takes them (ssh2 maps the string forms). */
export type OpenFlags = 'r' | 'wx'

/** A request waiting for its answer: when it was sent, and how to fail it. */
interface InFlight {
  readonly since: number
  readonly fail: (err: Error) => void
}

/** How a {@link Session} bounds its requests. */
export interface SessionOptions {
  /** How long a request may wait for its answer (ms, default {@link DEFAULT_REQUEST_TIMEOUT_MS}). */
  readonly requestTimeoutMs?: number | undefined
  /** Called once when a request waited that long, after the session failed its requests: ends the connection (or channel). */
  readonly onExpire?: ((err: LostAnswer) => void) | undefined
}

/** ssh2's state of the channel's sending side (`open` until it closes); undefined when ssh2 does not say. */
function outgoingState(sftp: SFTPWrapper): unknown {
  return (sftp as unknown as { outgoing?: { state?: unknown } }).outgoing?.state
}

/**
 * One SFTP session: the requests seamfs sends, as promises, plus pipelined
 * whole-file transfers. Requests are answered in order by OpenSSH, so callers
 * may send several before awaiting the first (one round trip for all).
 *
 * Every request is tracked until its answer: one timer watches the oldest, and when it has
 * waited `requestTimeoutMs` with no answer to any request meanwhile, the session is dead (see
 * {@link fail}): every request in flight fails at once with a {@link LostAnswer}, and `onExpire`
 * ends the connection. A request that ssh2 fails without an SFTP status (the channel or the
 * connection closed under it) is a {@link LostAnswer} too; one sent on a dead session is refused
 * unsent ({@link SessionGone}). An answer that comes after its request was failed is dropped.
 */
export class Session {
  readonly sftp: SFTPWrapper
  /** Increments with every new connection; a publisher uses it to sweep what a dropped one left. */
  readonly generation: number
  /** Set when the connection dropped: requests then fail at once instead of waiting for an answer that never comes. */
  dead = false
  readonly #timeoutMs: number
  readonly #onExpire: ((err: LostAnswer) => void) | undefined
  /** In the order sent: the first is the oldest. */
  readonly #inFlight = new Set<InFlight>()
  /** When the last answer came (any answer: the server is alive and working through its queue). */
  #lastAnswer = 0
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(sftp: SFTPWrapper, generation: number, options: SessionOptions = {}) {
    this.sftp = sftp
    this.generation = generation
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    this.#onExpire = options.onExpire
  }

  /** Requests sent and not answered yet. */
  get pending(): number {
    return this.#inFlight.size
  }

  /**
   * Marks the session dead and fails every request in flight with `err` now (their answers, if
   * any come, are dropped); later requests are refused unsent. Idempotent.
   */
  fail(err: Error): void {
    this.dead = true
    this.#disarm()
    const all = [...this.#inFlight]
    this.#inFlight.clear()
    for (const request of all) request.fail(err)
  }

  /**
   * Runs one ssh2 SFTP request as a promise. ssh2 throws synchronously when the
   * server lacks an extension; that becomes an {@link UnsupportedRequest}.
   */
  #request<T>(send: (cb: Callback<T>) => void): Promise<T> {
    // A channel that is closing no longer sends (ssh2 would keep the request, unsent, forever).
    if (this.dead || (outgoingState(this.sftp) ?? 'open') !== 'open') return Promise.reject(new SessionGone())
    return new Promise<T>((resolve, reject) => {
      const request: InFlight = { since: performance.now(), fail: reject }
      const answered: Callback<T> = (err, value) => {
        // Failed already (the deadline, or the drop): the late answer is dropped.
        if (!this.#inFlight.delete(request)) return
        // The timer stays: when it fires it finds nothing pending, or a younger request to wait for
        // (one timer per deadline, not one per burst of requests).
        this.#lastAnswer = performance.now()
        if (err === undefined || err === null) return resolve(value as T)
        // No SFTP status: ssh2 gave up on the answer (the channel or the connection closed under it).
        reject(statusOf(err) === undefined ? new LostAnswer('the connection was lost before the server answered', err) : err)
      }
      this.#inFlight.add(request)
      try {
        send(answered)
      } catch (err) {
        this.#inFlight.delete(request)
        reject(new UnsupportedRequest(err instanceof Error ? err.message : String(err), { cause: err }))
        return
      }
      this.#arm()
    })
  }

  /** Sets the timer for the oldest request in flight, if none is set. */
  #arm(): void {
    if (this.#timer !== undefined || this.dead) return
    const oldest = this.#inFlight.values().next()
    if (oldest.done === true) return
    const delay = Math.max(0, this.#waitingSince(oldest.value) + this.#timeoutMs - performance.now())
    this.#timer = setTimeout(() => this.#check(), Math.min(delay, MAX_TIMER_MS))
    this.#timer.unref()
  }

  /**
   * Since when the server owes `oldest` an answer without having answered anything: OpenSSH answers
   * in order, so a long queue whose answers keep coming (a big transfer on a slow link) is not a
   * hung server.
   */
  #waitingSince(oldest: InFlight): number {
    return Math.max(oldest.since, this.#lastAnswer)
  }

  #disarm(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** The timer fired: the oldest request has waited too long (the session dies), or a younger one is now the oldest. */
  #check(): void {
    this.#timer = undefined
    const oldest = this.#inFlight.values().next()
    if (oldest.done === true) return
    // Timers may fire a fraction of a millisecond early by this clock.
    if (performance.now() - this.#waitingSince(oldest.value) < this.#timeoutMs - 1) return this.#arm()
    const err = new LostAnswer(`the server did not answer for ${this.#timeoutMs} ms (the connection was closed; the next call reconnects)`)
    this.fail(err)
    this.#onExpire?.(err)
  }

  stat(path: string): Promise<Attrs> {
    return this.#request((cb) => this.sftp.stat(path, cb))
  }

  lstat(path: string): Promise<Attrs> {
    return this.#request((cb) => this.sftp.lstat(path, cb))
  }

  realpath(path: string): Promise<string> {
    return this.#request((cb) => this.sftp.realpath(path, cb))
  }

  readlink(path: string): Promise<string> {
    return this.#request((cb) => this.sftp.readlink(path, cb))
  }

  opendir(path: string): Promise<Buffer> {
    return this.#request((cb) => this.sftp.opendir(path, cb))
  }

  /** One READDIR on an open directory: its next entries (without `.` and `..`), or undefined at its end. */
  readdirChunk(handle: Buffer): Promise<FileEntryWithStats[] | undefined> {
    return this.#request<FileEntryWithStats[]>((cb) => this.sftp.readdir(handle, cb)).catch((err: unknown) => {
      if (statusOf(err) === STATUS.EOF) return undefined
      throw err
    })
  }

  open(path: string, flags: OpenFlags, attrs: InputAttributes = {}): Promise<Buffer> {
    return this.#request((cb) => this.sftp.open(path, flags, attrs, cb))
  }

  close(handle: Buffer): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.close(handle, cb)).then(() => undefined)
  }

  fstat(handle: Buffer): Promise<Attrs> {
    return this.#request((cb) => this.sftp.fstat(handle, cb))
  }

  fsetstat(handle: Buffer, attrs: InputAttributes): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.fsetstat(handle, attrs, cb)).then(() => undefined)
  }

  /** `fsync@openssh.com`. */
  fsync(handle: Buffer): Promise<void> {
    return this.#request<unknown>((cb) => this.sftp.ext_openssh_fsync(handle, cb)).then(() => undefined)
  }

  /** `posix-rename@openssh.com`: replaces `to` atomically (plain SFTP rename never overwrites on OpenSSH). */
  rename(from: string, to: string): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.ext_openssh_rename(from, to, cb)).then(() => undefined)
  }

  /**
   * Plain SSH_FXP_RENAME. OpenSSH never replaces with it: a regular file is moved with
   * link() + unlink(), which fails when `to` exists, whoever made it (an atomic no-overwrite
   * move; both names hold the file for a moment, never neither); anything else is renamed
   * only when a stat finds no `to` (racy: see `moveEntry`).
   */
  renameNoReplace(from: string, to: string): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.rename(from, to, cb)).then(() => undefined)
  }

  /** `hardlink@openssh.com`: fails when `link` exists, whoever made it: an atomic create-if-absent. */
  hardlink(existing: string, link: string): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.ext_openssh_hardlink(existing, link, cb)).then(() => undefined)
  }

  unlink(path: string): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.unlink(path, cb)).then(() => undefined)
  }

  rmdir(path: string): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.rmdir(path, cb)).then(() => undefined)
  }

  mkdir(path: string, attrs: InputAttributes = {}): Promise<void> {
    return this.#request<undefined>((cb) => this.sftp.mkdir(path, attrs, cb)).then(() => undefined)
  }

  /**
   * Reads an open file to its end with up to 32 requests in flight. `sizeHint`
   * (from a stat) plans the requests; a file that grew or shrank since is
   * still read exactly to the end the server reports, but never past `limit`
   * bytes: a file that grew beyond it yields its first `limit` bytes.
   */
  readAll(handle: Buffer, sizeHint: number, verb: FsVerb, signal?: AbortSignal, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
    const planned = Math.min(Math.max(0, sizeHint), limit)
    const main = Buffer.allocUnsafe(planned)
    const extra = new Map<number, Buffer>()
    const queue: [number, number][] = []
    for (let o = 0; o < planned; o += CHUNK) queue.push([o, Math.min(CHUNK, planned - o)])
    let planEnd = planned
    // One request past the plan: it finds the end of file, or that the file grew.
    const extend = (): void => {
      if (planEnd >= limit) return
      const length = Math.min(CHUNK, limit - planEnd)
      queue.push([planEnd, length])
      planEnd += length
    }
    extend()
    let eof = Number.POSITIVE_INFINITY
    let inflight = 0
    let failed = false
    return new Promise<Buffer>((resolve, reject) => {
      const fail = (err: Error): void => {
        failed = true
        reject(err)
      }
      const finish = (): void => {
        // No end of file seen: every byte up to the limit was read.
        const end = Math.min(eof, limit)
        if (end === planned && extra.size === 0) return resolve(main)
        const out = Buffer.allocUnsafe(end)
        main.copy(out, 0, 0, Math.min(planned, end))
        for (const [offset, bytes] of extra) if (offset < end) bytes.copy(out, offset, 0, Math.min(bytes.length, end - offset))
        resolve(out)
      }
      const pump = (): void => {
        if (signal?.aborted === true) return fail(abortedError(verb, signal.reason))
        while (!failed && inflight < READ_CONCURRENCY && queue.length > 0) {
          const [offset, length] = queue.shift() as [number, number]
          if (offset >= eof) continue
          const inMain = offset + length <= planned
          const target = inMain ? main : Buffer.allocUnsafe(length)
          if (!inMain) extra.set(offset, target)
          inflight++
          const read = (n: number): void => {
            inflight--
            if (failed) return
            if (n === 0) {
              eof = Math.min(eof, offset)
              if (!inMain) extra.delete(offset)
            } else if (n < length) queue.unshift([offset + n, length - n])
            // The file grew past the plan: keep reading until the server says EOF (or the limit).
            else if (offset + length >= planEnd) extend()
            if (n > 0 && n < length && !inMain) {
              // A short read into a separate buffer: the rest goes to its own buffer.
              extra.set(offset, target.subarray(0, n))
            }
            if (inflight === 0 && queue.every(([o]) => o >= eof)) finish()
            else pump()
          }
          this.#request<number>((cb) => this.sftp.read(handle, target, inMain ? offset : 0, length, offset, cb)).then(read, (err: unknown) => {
            inflight--
            if (!failed) fail(err instanceof Error ? err : new Error(String(err)))
          })
        }
      }
      pump()
    })
  }

  /**
   * Reads a file of `size` bytes with every request sent at once (the caller
   * may send CLOSE right behind them: nothing else is sent on the handle):
   * the chunks of `size`, and one past it that must find the end of file.
   * Undefined when the file is not `size` bytes (it changed since its stat:
   * a short chunk, or bytes past the end); the caller reads it again.
   */
  readPlanned(handle: Buffer, size: number): Promise<Buffer | undefined> {
    const main = Buffer.allocUnsafe(size)
    const reads: Promise<boolean>[] = []
    for (let o = 0; o < size; o += CHUNK) {
      const length = Math.min(CHUNK, size - o)
      reads.push(this.#request<number>((cb) => this.sftp.read(handle, main, o, length, o, cb)).then((n) => n === length))
    }
    const past = Buffer.allocUnsafe(1)
    reads.push(this.#request<number>((cb) => this.sftp.read(handle, past, 0, 1, size, cb)).then((n) => n === 0))
    return Promise.all(reads).then((fits) => (fits.every(Boolean) ? main : undefined))
  }

  /** True when `readPlanned` sends no more requests for `size` bytes than a whole-file read keeps in flight. */
  static plannable(size: number): boolean {
    return Math.ceil(size / CHUNK) + 1 <= READ_CONCURRENCY
  }

  /** One READ at `position`: the bytes the server returned (empty at end of file). */
  readAt(handle: Buffer, position: number, length = CHUNK): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(length)
    return this.#request<number>((cb) => this.sftp.read(handle, buffer, 0, length, position, cb)).then((n) => buffer.subarray(0, n))
  }

  /** Writes `bytes` at offset 0 with up to 16 requests in flight. */
  writeAll(handle: Buffer, bytes: Uint8Array): Promise<void> {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    let next = 0
    let inflight = 0
    let failed = false
    return new Promise<void>((resolve, reject) => {
      const pump = (): void => {
        while (!failed && inflight < WRITE_CONCURRENCY && next < data.length) {
          const offset = next
          const length = Math.min(CHUNK, data.length - offset)
          next += length
          inflight++
          this.#request<undefined>((cb) => this.sftp.write(handle, data, offset, length, offset, cb)).then(
            () => {
              inflight--
              if (failed) return
              if (inflight === 0 && next >= data.length) resolve()
              else pump()
            },
            (err: unknown) => {
              inflight--
              if (failed) return
              failed = true
              reject(err instanceof Error ? err : new Error(String(err)))
            },
          )
        }
      }
      if (data.length === 0) resolve()
      else pump()
    })
  }

  /** Ends the SFTP channel (not the client). */
  end(): void {
    this.sftp.end()
  }
}

/** How to reach the server again after a drop. */
export interface ConnectOptions extends HostKeyOptions {
  readonly username?: string | undefined
  readonly privateKey?: string | Buffer | undefined
  readonly passphrase?: string | undefined
  readonly password?: string | undefined
  readonly agent?: string | undefined
  /** The connect timeout (TCP, SSH handshake, authentication). */
  readonly readyTimeoutMs: number
  /** How long any request (the SFTP channel's opening too) may wait for its answer before the connection is declared dead. */
  readonly requestTimeoutMs: number
  readonly client?: Client | undefined
}

/**
 * One SSH connection and one SFTP session on it, opened on first use and
 * reopened on the next use after it dropped (requests in flight at the drop
 * fail with a {@link LostAnswer}; nothing is retried here). A request unanswered
 * for `requestTimeoutMs` declares the connection dead: it is ended (destroyed when
 * seamfs made it; for an injected client, its SFTP channel is closed), its requests
 * fail at once, and the next use connects anew.
 */
export class Connection {
  readonly #options: ConnectOptions
  #injected: Client | undefined
  #current: Promise<Session> | undefined
  #generation = 0
  #closed = false
  readonly #cleanups = new Set<() => void>()

  constructor(options: ConnectOptions) {
    this.#options = options
    this.#injected = options.client
  }

  /** The live session, connecting first when there is none. */
  session(): Promise<Session> {
    if (this.#closed) return Promise.reject(closedFailure())
    const current = (this.#current ??= this.#open())
    current.catch(() => {
      if (this.#current === current) this.#current = undefined
    })
    return current
  }

  /** Ends the session, and the client when seamfs made it. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    const current = this.#current
    this.#current = undefined
    const session = await current?.catch(() => undefined)
    session?.end()
    for (const cleanup of this.#cleanups) cleanup()
    this.#cleanups.clear()
  }

  async #open(): Promise<Session> {
    let client: Client
    let owned: boolean
    if (this.#injected !== undefined) {
      client = this.#injected
      this.#injected = undefined
      owned = false
      // Pipelined requests are small packets sent together: with Nagle's algorithm on, each one after
      // the first waits for the ACK of the one before (a round trip, or a 40 ms delayed ACK).
      client.setNoDelay(true)
    } else if (this.#options.host !== undefined && this.#options.username !== undefined) {
      client = await this.#connect()
      owned = true
    } else {
      throw new ConnectionFailure({
        code: 'FS_IO_ERROR',
        reason: 'the injected ssh2 client is gone and no host/username were given to reconnect',
        retryable: true,
      })
    }
    const { sftp, lost, settle } = await this.#openSftp(client, owned)
    if (lost()) {
      // ssh2 may report the channel open (its VERSION was already read) after the connection closed.
      settle()
      if (owned) client.end()
      throw new ConnectionFailure({ code: 'FS_IO_ERROR', reason: 'the connection was lost while the SFTP session was opened', retryable: true })
    }
    const mine = this.#current
    const forget = (): void => {
      if (this.#current === mine) this.#current = undefined
    }
    const session = new Session(sftp, ++this.#generation, {
      requestTimeoutMs: this.#options.requestTimeoutMs,
      onExpire: () => {
        // The server stopped answering: a frozen server or a dead link that no keepalive noticed yet.
        forget()
        // Destroyed, not ended: ending waits for the silent peer to close its side.
        if (owned) client.destroy()
        else sftp.end()
        cleanup()
      },
    })
    const drop = (): void => {
      session.fail(new LostAnswer('the connection was lost before the server answered'))
      forget()
      cleanup()
    }
    const cleanup = (): void => {
      client.removeListener('close', drop)
      sftp.removeListener('close', drop)
      this.#cleanups.delete(cleanup)
      if (owned) client.end()
    }
    client.once('close', drop)
    sftp.once('close', drop)
    // Only now: a close between the channel's opening and these listeners was seen by the ones of #openSftp.
    settle()
    this.#cleanups.add(cleanup)
    if (this.#closed) {
      cleanup()
      session.end()
      throw closedFailure()
    }
    return session
  }

  /**
   * Opens the SFTP channel on `client` (its VERSION exchange too), waiting no longer than
   * `requestTimeoutMs`. `lost` says whether the client or the channel closed meanwhile: ssh2 may
   * call back with the channel after the connection's 'close' (or emit the channel's 'close' in
   * the same tick, before an awaiting caller could listen). `settle` stops watching, once the
   * caller's own listeners are on.
   */
  async #openSftp(client: Client, owned: boolean): Promise<{ sftp: SFTPWrapper; lost: () => boolean; settle: () => void }> {
    const ms = this.#options.requestTimeoutMs
    let late = false
    let closed = false
    let channel: SFTPWrapper | undefined
    const onClose = (): void => void (closed = true)
    const settle = (): void => {
      client.removeListener('close', onClose)
      channel?.removeListener('close', onClose)
    }
    client.once('close', onClose)
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const sftp = await new Promise<SFTPWrapper>((resolve, reject) => {
        timer = setTimeout(
          () => {
            late = true
            const reason = `the server did not open the SFTP session within ${ms} ms`
            reject(new ConnectionFailure({ code: 'FS_IO_ERROR', reason, retryable: true }))
            if (owned) client.destroy()
          },
          Math.min(ms, MAX_TIMER_MS),
        )
        timer.unref()
        client.sftp((err, s) => {
          // Opened after all, too late: closed unused.
          if (late) return void (err ? undefined : s.end())
          if (err) return reject(err)
          channel = s
          s.once('close', onClose)
          // Errors surface as failed requests and a close; an unhandled 'error' event would crash the process.
          // Kept for the channel's life: a fatal protocol error may come after seamfs let go of it.
          s.on('error', () => undefined)
          resolve(s)
        })
      })
      return { sftp, lost: () => closed, settle }
    } catch (err) {
      settle()
      if (owned) client.end()
      throw err
    } finally {
      clearTimeout(timer)
    }
  }

  async #connect(): Promise<Client> {
    const o = this.#options
    const policy = await hostKeyPolicy(o)
    let refusal: string | undefined
    const verify = (key: Buffer): boolean => {
      refusal = policy.check?.(key)
      return refusal === undefined
    }
    const config: ConnectConfig = {
      host: o.host as string,
      port: o.port,
      username: o.username as string,
      readyTimeout: o.readyTimeoutMs,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 3,
      ...(o.privateKey === undefined ? {} : { privateKey: o.privateKey }),
      ...(o.passphrase === undefined ? {} : { passphrase: o.passphrase }),
      ...(o.password === undefined ? {} : { password: o.password }),
      ...(o.agent === undefined ? {} : { agent: o.agent }),
      ...(policy.check === undefined ? {} : { hostVerifier: verify }),
      // Moved to the front (remove, then prepend): the server then shows the key known_hosts knows, as OpenSSH arranges.
      ...(policy.preferred.length === 0
        ? {}
        : { algorithms: { serverHostKey: { remove: [...policy.preferred], prepend: [...policy.preferred], append: [] } } }),
    }
    return new Promise<Client>((resolve, reject) => {
      const client = new Client()
      let agentFailure: Error | undefined
      const onError = (err: Error): void => {
        // ssh2 reports an unusable agent (or a key it cannot sign with) and goes on to the next method.
        if (levelOf(err) === 'agent') return void (agentFailure = err)
        client.removeListener('error', onError)
        client.removeListener('ready', onReady)
        // More errors may follow the first; unheard, one would crash the process.
        client.on('error', () => undefined)
        client.end()
        // A refused host key is not a network hiccup: retrying meets the same key.
        if (refusal !== undefined) reject(new ConnectionFailure({ code: 'FS_IO_ERROR', reason: refusal, retryable: false }, err))
        else if (agentFailure !== undefined && levelOf(err) === 'client-authentication') {
          const reason = `authentication failed (the ssh-agent at ${o.agent} could not be used: ${agentFailure.message})`
          reject(new ConnectionFailure({ code: 'FS_PERMISSION_DENIED', reason }, err))
        } else reject(err)
      }
      const onReady = (): void => {
        client.removeListener('error', onError)
        client.on('error', () => undefined)
        client.setNoDelay(true)
        resolve(client)
      }
      client.on('error', onError)
      client.once('ready', onReady)
      try {
        client.connect(config)
      } catch (err) {
        // ssh2 validates options (an unparsable key, say) synchronously: a setup error, not a network one.
        const detail = err instanceof Error ? err.message : String(err)
        reject(new ConnectionFailure({ code: 'FS_IO_ERROR', reason: `invalid SFTP connection options: ${detail}` }, err))
      }
    })
  }
}

/** ssh2's `level` of an error (`client-authentication`, `agent`…). */
function levelOf(err: Error): unknown {
  return (err as { level?: unknown }).level
}

function closedFailure(): ConnectionFailure {
  return new ConnectionFailure({ code: 'FS_IO_ERROR', reason: 'the SFTP filesystem is closed' })
}
