import { isAbortError, translateError, type ErrorRow, type FsError, type FsVerb } from '@seamfs/core/backend'

export type S3ErrorRow = ErrorRow

const network = (reason: string): S3ErrorRow => ({ code: 'FS_IO_ERROR', reason, retryable: true })
/**
 * A network failure with the request in flight: it may have reached the server, and its answer was
 * lost (`lostAnswer`: a mutation that meets it may have taken effect).
 */
const lost = (reason: string): S3ErrorRow => ({ code: 'FS_IO_ERROR', reason, retryable: true, lostAnswer: true })

/**
 * The one translation table into seamfs codes, keyed by the S3 error code the server sent
 * (the SDK's error `name`), else by the HTTP status, else by Node's network error code.
 * Lookup order is in {@link s3ErrorRow}; an unknown 5xx, or an unknown system error without
 * an HTTP answer, is retryable; anything else unknown is not.
 *
 * `lostAnswer` marks the failures where the request may have reached the server and its answer
 * was lost: a connection reset or broken with the request in flight, a socket that went idle (the
 * SDK's `TimeoutError`), a response cut short, a gateway that timed out waiting for the server.
 * The failures known to come before anything was sent (connection refused, host not found or
 * unreachable) are not marked, nor is any answer of the server itself (S3's `RequestTimeout` is a
 * 400: the server gave up on reading the request and did not apply it). Which request failed decides
 * the rest: see {@link s3ErrorRow}.
 */
export const S3_ERROR_TABLE: Readonly<Record<string, S3ErrorRow>> = {
  // S3 error codes
  NoSuchKey: { code: 'FS_NOT_FOUND', reason: 'not found' },
  NotFound: { code: 'FS_NOT_FOUND', reason: 'not found' },
  NoSuchBucket: { code: 'FS_IO_ERROR', reason: 'the bucket does not exist' },
  AccessDenied: { code: 'FS_PERMISSION_DENIED', reason: 'access denied' },
  AllAccessDisabled: { code: 'FS_PERMISSION_DENIED', reason: 'all access to this object is disabled' },
  InvalidAccessKeyId: { code: 'FS_PERMISSION_DENIED', reason: 'invalid access key' },
  SignatureDoesNotMatch: { code: 'FS_PERMISSION_DENIED', reason: 'signature does not match (wrong secret key?)' },
  ExpiredToken: { code: 'FS_PERMISSION_DENIED', reason: 'the session token expired' },
  InvalidToken: { code: 'FS_PERMISSION_DENIED', reason: 'invalid session token' },
  PreconditionFailed: { code: 'FS_STALE_VERSION', reason: 'the object changed (precondition failed)' },
  ConditionalRequestConflict: { code: 'FS_STALE_VERSION', reason: 'a concurrent conditional write won', retryable: true },
  KeyTooLongError: { code: 'FS_IO_ERROR', reason: 'key too long' },
  EntityTooLarge: { code: 'FS_TOO_LARGE', reason: 'object too large for one PUT' },
  InvalidRange: { code: 'FS_IO_ERROR', reason: 'invalid range' },
  MissingContentLength: { code: 'FS_IO_ERROR', reason: 'the server requires a Content-Length (set requestChecksumCalculation to WHEN_REQUIRED)' },
  RequestTimeout: network('the server timed out waiting for the request'),
  SlowDown: network('slow down (throttled)'),
  ServiceUnavailable: network('service unavailable'),
  InternalError: network('internal server error'),
  // The SDK's own deadlines (no HTTP answer): see `timeoutRow` for the message with the deadline.
  TimeoutError: lost('request timed out'),
  // HTTP statuses
  '403': { code: 'FS_PERMISSION_DENIED', reason: 'forbidden' },
  '404': { code: 'FS_NOT_FOUND', reason: 'not found' },
  '409': { code: 'FS_STALE_VERSION', reason: 'conflict with a concurrent write', retryable: true },
  '412': { code: 'FS_STALE_VERSION', reason: 'the object changed (precondition failed)' },
  '413': { code: 'FS_TOO_LARGE', reason: 'request entity too large' },
  '429': network('too many requests'),
  '500': network('internal server error'),
  '502': network('bad gateway'),
  '503': network('service unavailable'),
  '504': lost('gateway timeout (the server may have applied the request)'),
  // Node network errors (no HTTP response at all)
  ECONNRESET: lost('connection reset'),
  ECONNREFUSED: network('connection refused'),
  ECONNABORTED: lost('connection aborted'),
  EPIPE: lost('broken pipe'),
  ETIMEDOUT: lost('connection timed out'),
  EHOSTUNREACH: network('host unreachable'),
  ENETUNREACH: network('network unreachable'),
  EAI_AGAIN: network('DNS lookup failed temporarily'),
  ENOTFOUND: network('host not found'),
  ERR_STREAM_PREMATURE_CLOSE: lost('connection closed before the response ended'),
}

/** The deadlines of a client this backend built (`idleTimeoutMs`, `connectTimeoutMs`), for the messages of its timeouts. */
export interface Deadlines {
  readonly idleTimeoutMs: number
  readonly connectTimeoutMs: number
}

/**
 * What became of one SDK call (all its attempts), noted on the error it threw by the store
 * (`Store` in `store.ts`): whether the request changes the store, and whether one of its attempts
 * may have reached the server and lost its answer. The SDK retries (up to `maxAttempts`), and the
 * error it throws is the last attempt's: a PUT whose first answer was lost may end in a
 * `ECONNREFUSED`, known to come before anything was sent, and still have been applied.
 */
export interface RequestOutcome {
  readonly mutation: boolean
  readonly lostAnswer: boolean
}

const OUTCOME = Symbol.for('@seamfs/backend-s3:outcome')
/** Set on a `TimeoutError` that came before the connection was made (the connect deadline). */
const CONNECT_TIMEOUT = Symbol.for('@seamfs/backend-s3:connect-timeout')

/** Notes `outcome` on `err` (when it is an object) and returns it, for `throw`. */
export function noteOutcome(err: unknown, outcome: RequestOutcome): unknown {
  if (typeof err === 'object' && err !== null && Object.isExtensible(err))
    Object.defineProperty(err, OUTCOME, { value: outcome, configurable: true, writable: true })
  return err
}

/** What {@link noteOutcome} noted on `err`, if anything. */
export function outcomeOf(err: unknown): RequestOutcome | undefined {
  return typeof err === 'object' && err !== null ? (err as { [OUTCOME]?: RequestOutcome })[OUTCOME] : undefined
}

/** Marks a `TimeoutError` as the connect deadline's (see {@link s3ErrorRow}). */
export function noteConnectTimeout(err: unknown): void {
  if (typeof err === 'object' && err !== null && Object.isExtensible(err)) Object.defineProperty(err, CONNECT_TIMEOUT, { value: true, configurable: true })
}

/** The HTTP status of an SDK error, when the server answered at all. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const status = (err as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode
  return typeof status === 'number' ? status : undefined
}

/** The error `name` (the S3 error code, or the SDK's `TimeoutError`) and Node's `code`, when they are strings. */
function namesOf(err: unknown): { name: string | undefined; code: string | undefined } {
  const e = typeof err === 'object' && err !== null ? (err as { name?: unknown; code?: unknown }) : {}
  return { name: typeof e.name === 'string' ? e.name : undefined, code: typeof e.code === 'string' ? e.code : undefined }
}

/** An SDK deadline that passed, with the deadline in the message where this backend set it. */
function timeoutRow(err: unknown, deadlines: Deadlines | undefined): S3ErrorRow {
  if (deadlines === undefined) return S3_ERROR_TABLE['TimeoutError'] ?? lost('request timed out')
  const connect = (err as { [CONNECT_TIMEOUT]?: boolean })[CONNECT_TIMEOUT] === true
  return connect
    ? lost(`timed out after ${deadlines.connectTimeoutMs} ms connecting to the server (connectTimeoutMs)`)
    : lost(`timed out after ${deadlines.idleTimeoutMs} ms without data from the server (idleTimeoutMs)`)
}

/** The table's row for `err` alone: by S3 error code, then HTTP status, then Node error code; a fallback otherwise. */
function tableRow(err: unknown, deadlines: Deadlines | undefined): S3ErrorRow {
  const status = httpStatusOf(err)
  const { name, code } = namesOf(err)
  // A success status on an error: the answer was cut after its status line (the body, or its parsing, failed).
  if (status !== undefined && status >= 200 && status < 300) return lost(`the answer (status ${status}) was cut short`)
  const byName = name !== undefined && status !== undefined ? S3_ERROR_TABLE[name] : undefined
  if (byName !== undefined) return byName
  const byStatus = status === undefined ? undefined : S3_ERROR_TABLE[String(status)]
  if (byStatus !== undefined) return byStatus
  if (status !== undefined) {
    return status >= 500 ? network(`server error ${status}`) : { code: 'FS_IO_ERROR', reason: `request failed with status ${status}` }
  }
  const byCode = code === undefined ? undefined : S3_ERROR_TABLE[code]
  if (byCode !== undefined) return byCode
  if (name === 'TimeoutError') return timeoutRow(err, deadlines)
  const byBareName = name === undefined ? undefined : S3_ERROR_TABLE[name]
  // No answer and no known code: a system error (it has a code) is a network failure, with the
  // request possibly in flight; anything else is not retried.
  return (
    byBareName ??
    (code !== undefined
      ? lost(`network failure (${code})`)
      : { code: 'FS_IO_ERROR', reason: `request failed: ${err instanceof Error ? err.message : String(err)}` })
  )
}

/**
 * Whether one failed attempt of a request may have reached the server and lost its answer: an
 * abort in flight, or a row marked `lostAnswer` (no answer, or one cut short).
 */
export function answerLost(err: unknown): boolean {
  return isAbortError(err) || tableRow(err, undefined).lostAnswer === true
}

/**
 * The row for `err` (by S3 error code, then HTTP status, then Node error code; a fallback
 * otherwise), with `lostAnswer` as the request it came from says: where the store noted the
 * outcome ({@link outcomeOf}), only a mutation (PUT, copy, DELETE) one of whose attempts lost its
 * answer carries it, whatever its last attempt's error; a read never does (nor a failure the
 * server answered). Without a note (a body that failed while streaming), the table's row says. `deadlines`: this
 * backend's, for the message of a timeout.
 */
export function s3ErrorRow(err: unknown, deadlines?: Deadlines): S3ErrorRow {
  const row = tableRow(err, deadlines)
  const outcome = outcomeOf(err)
  if (outcome === undefined) return row
  const lostAnswer = outcome.mutation && outcome.lostAnswer
  return lostAnswer === (row.lostAnswer === true) ? row : { ...row, lostAnswer }
}

/**
 * {@link s3ErrorRow} as a whole translation, for what runs outside core's public methods (the
 * probe); inside them core translates through `S3FileSystem.errorRow`.
 */
export function toFsError(err: unknown, verb: FsVerb, path: string, deadlines?: Deadlines): FsError {
  return translateError(err, verb, path, (e) => s3ErrorRow(e, deadlines))
}

/**
 * {@link toFsError} of a failure that changed nothing the caller asked for (a capability probe on
 * scratch keys, a lock object): never `indeterminate`, whatever the request.
 */
export function toDefiniteFsError(err: unknown, verb: FsVerb, path: string): FsError {
  return translateError(err, verb, path, (e) => ({ ...s3ErrorRow(e), lostAnswer: false }))
}
