import { abortedError, type ErrorRow, type FsVerb } from '@seamfs/core/backend'

/**
 * The one translation table: SFTP v3 status codes (draft-ietf-secsh-filexfer-02 §7)
 * to seamfs codes. OpenSSH's sftp-server folds errno into these: ENOENT, ENOTDIR,
 * ELOOP and EBADF are NO_SUCH_FILE; EPERM and EACCES are PERMISSION_DENIED;
 * ENAMETOOLONG and EINVAL are BAD_MESSAGE; everything else (EEXIST, EISDIR,
 * ENOTEMPTY, ENOSPC…) is FAILURE, which callers disambiguate with a fresh stat.
 */
export const STATUS_TABLE: Readonly<Record<number, ErrorRow>> = {
  1: { code: 'FS_IO_ERROR', reason: 'unexpected end of file' },
  2: { code: 'FS_NOT_FOUND', reason: 'not found' },
  3: { code: 'FS_PERMISSION_DENIED', reason: 'permission denied' },
  4: { code: 'FS_IO_ERROR', reason: 'the server reported a failure' },
  5: { code: 'FS_IO_ERROR', reason: 'the server rejected the request (bad message: name too long or invalid)' },
  6: { code: 'FS_IO_ERROR', reason: 'no connection', retryable: true },
  7: { code: 'FS_IO_ERROR', reason: 'connection lost', retryable: true },
  8: { code: 'FS_UNSUPPORTED', reason: 'operation not supported by the server' },
}

/** SFTP status codes by name, for the call sites that branch on one. */
export const STATUS = { EOF: 1, NO_SUCH_FILE: 2, PERMISSION_DENIED: 3, FAILURE: 4 } as const

/** ssh2's connection-level failures (`err.level`): none is an SFTP status. */
const LEVEL_TABLE: Readonly<Record<string, ErrorRow>> = {
  'client-authentication': { code: 'FS_PERMISSION_DENIED', reason: 'authentication failed' },
  'client-timeout': { code: 'FS_IO_ERROR', reason: 'timed out connecting', retryable: true },
  'client-socket': { code: 'FS_IO_ERROR', reason: 'connection failed', retryable: true },
  'client-dns': { code: 'FS_IO_ERROR', reason: 'host name lookup failed', retryable: true },
}

/** The status code of an ssh2 SFTP error, or undefined for anything else. */
export function statusOf(err: unknown): number | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'number' ? code : undefined
}

/** Marks a request ssh2 refused before sending it (it throws when the server lacks an extension). */
export class UnsupportedRequest extends Error {
  override readonly name = 'UnsupportedRequest'
}

/**
 * A failure of this backend's own connection handling, which no SFTP status
 * names (a closed filesystem, a host key that does not match the pin…): it
 * carries its row, so the operation that meets it names itself in the message.
 */
export class ConnectionFailure extends Error {
  override readonly name = 'ConnectionFailure'
  readonly row: ErrorRow

  constructor(row: ErrorRow, cause?: unknown) {
    super(row.reason, cause === undefined ? undefined : { cause })
    this.row = row
  }
}

/**
 * A request that was sent (or may have been) and whose answer will never come: the connection
 * or the SFTP channel closed with it in flight, or the server did not answer within
 * `requestTimeoutMs` and the connection was declared dead. A mutation that meets it may have
 * taken effect (core flags it `indeterminate`), unless the operation knows its change had not been
 * sent yet ({@link CommitPoint}). Retryable: the next call reconnects.
 */
export class LostAnswer extends Error {
  override readonly name = 'LostAnswer'
  readonly row: ErrorRow

  constructor(reason: string, cause?: unknown) {
    super(reason, cause === undefined ? undefined : { cause })
    this.row = { code: 'FS_IO_ERROR', reason, retryable: true, lostAnswer: true }
  }
}

/** A request refused before it was sent: its session had already died (nothing reached the server). Retryable. */
export class SessionGone extends Error {
  override readonly name = 'SessionGone'
  readonly row: ErrorRow = { code: 'FS_IO_ERROR', reason: 'the SFTP connection was lost (the request was not sent)', retryable: true }

  constructor() {
    super('the SFTP connection was lost (the request was not sent)')
  }
}

/**
 * How long an aborted mutation that had not reached its commit point may take to answer by
 * itself before it is answered a definite `FS_ABORTED`: less than core's grace for aborted
 * mutations (`ABORT_GRACE_MS`, 20 ms, in core's abort-wait.ts), past which core answers one
 * flagged indeterminate.
 */
export const DEFINITE_ABORT_MS = 15

/**
 * The point of an operation where the request that makes its change is sent (a rename, a link,
 * an unlink, a mkdir). A connection lost before it is a definite failure, nothing changed: the
 * {@link LostAnswer} becomes a plain retryable failure; after it, the failure stays indeterminate.
 * An abort before it is a definite `FS_ABORTED` (the point is then closed: reaching it throws, so
 * the change is never sent, and the operation cleans up on its own); an abort after it is left to
 * core (`FS_ABORTED` flagged indeterminate once its grace has passed).
 */
export class CommitPoint {
  readonly #verb: FsVerb
  #sent = false
  #abandoned: unknown = undefined
  #closed = false

  constructor(verb: FsVerb) {
    this.#verb = verb
  }

  /** Called right before the first request that changes what the operation is about; throws when the caller left before it. */
  readonly reached = (): void => {
    if (this.#closed) throw abortedError(this.#verb, this.#abandoned)
    this.#sent = true
  }

  /**
   * The failure as the operation reports it: a lost answer before the point is definite; after it,
   * any failure of the dropped connection is a lost answer (a request refused on the dead session
   * while the operation looked at what its change did still leaves that change unknown).
   */
  outcome(err: unknown): unknown {
    if (!droppedConnection(err)) return err
    if (this.#sent) return err instanceof LostAnswer ? err : new LostAnswer('the connection was lost while the change was being made', err)
    if (!(err instanceof LostAnswer)) return err
    const reason = `${err.row.reason}; nothing was changed (the connection was lost before the change was sent)`
    return new ConnectionFailure({ code: 'FS_IO_ERROR', reason, retryable: true }, err)
  }

  /**
   * Runs a mutation with its commit point: its failure as {@link outcome} reports it. An abort of
   * `signal` before the point closes it; the mutation's own answer then comes within
   * {@link DEFINITE_ABORT_MS} on a server that answers (having cleaned up), else a definite
   * `FS_ABORTED` (the mutation runs on to its end in the background, its late answer dropped).
   */
  static run<T>(verb: FsVerb, signal: AbortSignal | undefined, mutation: (point: CommitPoint) => Promise<T>): Promise<T> {
    const point = new CommitPoint(verb)
    const running = (async () => {
      try {
        return await mutation(point)
      } catch (err) {
        throw point.outcome(err)
      }
    })()
    if (signal === undefined) return running
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const onAbort = (): void => {
        if (point.#sent) return
        point.#closed = true
        point.#abandoned = signal.reason
        // Its own answer (after its cleanup, on a server that answers) is better; a silent server gets the definite one.
        timer = setTimeout(() => reject(abortedError(verb, signal.reason)), DEFINITE_ABORT_MS)
      }
      const settle = (): void => {
        signal.removeEventListener('abort', onAbort)
        clearTimeout(timer)
      }
      running.then(
        (value) => {
          settle()
          resolve(value)
        },
        (err: unknown) => {
          settle()
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the mutation's own failure, passed on untouched: core translates it
          reject(err)
        },
      )
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}

/**
 * True when `err` (or the failure it wraps) is the connection dropping, not an answer of the
 * server: a {@link LostAnswer} or a request its dead session refused. A read that meets it may be
 * sent again over a new connection.
 */
export function droppedConnection(err: unknown): boolean {
  let e: unknown = err
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    if (e instanceof LostAnswer || e instanceof SessionGone) return true
    // Wrapped by this backend's own messages (an FsError naming the root, say): look inside.
    if (!(e instanceof Error) || (e as { code?: unknown }).code !== 'FS_IO_ERROR') return false
    e = e.cause
  }
  return false
}

/**
 * The row of anything ssh2 (or the connection handling) throws: SFTP statuses by
 * the table, connection failures by ssh2's `level`, a request in flight when the
 * connection died ({@link LostAnswer}: `lostAnswer`, so a mutation is indeterminate),
 * and every other error (sockets fail with an errno string) a retryable
 * `FS_IO_ERROR`. Never by message text.
 */
export function sftpErrorRow(err: unknown): ErrorRow {
  if (err instanceof ConnectionFailure || err instanceof LostAnswer || err instanceof SessionGone) return err.row
  if (err instanceof UnsupportedRequest) return { code: 'FS_UNSUPPORTED', reason: err.message }
  const status = statusOf(err)
  const level = typeof err === 'object' && err !== null ? (err as { level?: unknown }).level : undefined
  const row = status !== undefined ? STATUS_TABLE[status] : typeof level === 'string' ? LEVEL_TABLE[level] : undefined
  if (row !== undefined) return row
  if (status !== undefined) return { code: 'FS_IO_ERROR', reason: `SFTP status ${status}` }
  // Neither a status nor a known level: the connection itself failed, which a retry may fix.
  const detail = err instanceof Error ? err.message : String(err)
  return { code: 'FS_IO_ERROR', reason: `connection failed: ${detail}`, retryable: true }
}
