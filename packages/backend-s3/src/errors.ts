import { translateError, type ErrorRow, type FsError, type FsVerb } from '@seamfs/core/backend'

export type S3ErrorRow = ErrorRow

const network = (reason: string): S3ErrorRow => ({ code: 'FS_IO_ERROR', reason, retryable: true })

/**
 * The one translation table into seamfs codes, keyed by the S3 error code the server sent
 * (the SDK's error `name`), else by the HTTP status, else by Node's network error code.
 * Lookup order is in {@link s3ErrorRow}; an unknown 5xx, or an unknown system error without
 * an HTTP answer, is retryable; anything else unknown is not.
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
  TimeoutError: network('request timed out'),
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
  '504': network('gateway timeout'),
  // Node network errors (no HTTP response at all)
  ECONNRESET: network('connection reset'),
  ECONNREFUSED: network('connection refused'),
  ECONNABORTED: network('connection aborted'),
  EPIPE: network('broken pipe'),
  ETIMEDOUT: network('connection timed out'),
  EHOSTUNREACH: network('host unreachable'),
  ENETUNREACH: network('network unreachable'),
  EAI_AGAIN: network('DNS lookup failed temporarily'),
  ENOTFOUND: network('host not found'),
  ERR_STREAM_PREMATURE_CLOSE: network('connection closed before the response ended'),
}

/** The HTTP status of an SDK error, when the server answered at all. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const status = (err as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode
  return typeof status === 'number' ? status : undefined
}

/** The row for `err`: by S3 error code, then HTTP status, then Node error code; a fallback otherwise. */
export function s3ErrorRow(err: unknown): S3ErrorRow {
  const status = httpStatusOf(err)
  const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  const byName = typeof name === 'string' && status !== undefined ? S3_ERROR_TABLE[name] : undefined
  if (byName !== undefined) return byName
  const byStatus = status === undefined ? undefined : S3_ERROR_TABLE[String(status)]
  if (byStatus !== undefined) return byStatus
  if (status !== undefined) {
    return status >= 500 ? network(`server error ${status}`) : { code: 'FS_IO_ERROR', reason: `request failed with status ${status}` }
  }
  const byCode = typeof code === 'string' ? S3_ERROR_TABLE[code] : undefined
  const byBareName = typeof name === 'string' ? S3_ERROR_TABLE[name] : undefined
  // No answer and no known code: a system error (it has a code) is a network failure; anything else is not retried.
  return (
    byCode ??
    byBareName ??
    (typeof code === 'string'
      ? network(`network failure (${code})`)
      : { code: 'FS_IO_ERROR', reason: `request failed: ${err instanceof Error ? err.message : String(err)}` })
  )
}

/**
 * {@link s3ErrorRow} as a whole translation, for what runs outside core's public methods (the
 * probe); inside them core translates through `S3FileSystem.errorRow`.
 */
export function toFsError(err: unknown, verb: FsVerb, path: string): FsError {
  return translateError(err, verb, path, s3ErrorRow)
}
