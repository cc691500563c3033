import { performance } from 'node:perf_hooks'
import type { FileEntryWithStats, InputAttributes, SFTPWrapper, Stats } from 'ssh2'
import { abortedError, type FsVerb } from '@seamfs/core/backend'
import { LostAnswer, SessionGone, STATUS, statusOf, UnsupportedRequest } from './errors.js'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './options.js'

/** Bytes per READ / WRITE request: well under OpenSSH's 255 KiB limit and ssh2's default. */
const CHUNK = 64 * 1024
/** Requests kept in flight by one transfer (ssh2's channel window is 2 MiB). */
const READ_CONCURRENCY = 32
const WRITE_CONCURRENCY = 16
/** Content up to this size is sent by `writeAll` before it returns: requests sent after it queue behind the writes. */
export const WRITE_AT_ONCE_BYTES = CHUNK * WRITE_CONCURRENCY

type Callback<T> = (err?: Error | null, value?: T) => void

/** The longest delay `setTimeout` takes (a longer one fires at once). */
export const MAX_TIMER_MS = 2 ** 31 - 1

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

/** How {@link Session.readAll} reads a file. */
export interface ReadAll {
  /** The size a stat gave: it plans the requests. */
  readonly sizeHint: number
  /** The verb of the error when `signal` aborts the read. */
  readonly verb: FsVerb
  readonly signal?: AbortSignal | undefined
  /** Bytes past this are never read (default: none are refused). */
  readonly limit?: number | undefined
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
   * bytes (none when not given): a file that grew beyond it yields its first
   * `limit` bytes. `verb` names an abort by `signal`.
   */
  readAll(handle: Buffer, { sizeHint, verb, signal, limit = Number.POSITIVE_INFINITY }: ReadAll): Promise<Buffer> {
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
