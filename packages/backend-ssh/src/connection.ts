import type { Client, SFTPWrapper } from 'ssh2'
import { ConnectionFailure, LostAnswer } from './errors.js'
import { connectClient, type HandshakeOptions } from './handshake.js'
import { MAX_TIMER_MS, Session } from './session.js'

export { sha256Fingerprint } from './known-hosts.js'
export { Session, WRITE_AT_ONCE_BYTES, type Attrs, type OpenFlags, type SessionOptions } from './session.js'

/** How to reach the server again after a drop. */
export interface ConnectOptions extends HandshakeOptions {
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
      client = await connectClient(this.#options)
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
}

function closedFailure(): ConnectionFailure {
  return new ConnectionFailure({ code: 'FS_IO_ERROR', reason: 'the SFTP filesystem is closed' })
}
