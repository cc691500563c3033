import { FsError, isAbortError, isFsError, type FsErrorCode, type FsVerb } from '@seamfs/core'

interface StatusRow {
  readonly code: FsErrorCode
  readonly reason: string
  readonly retryable?: boolean
}

/**
 * The one translation table: SFTP v3 status codes (draft-ietf-secsh-filexfer-02 §7)
 * to seamfs codes. OpenSSH's sftp-server folds errno into these: ENOENT, ENOTDIR,
 * ELOOP and EBADF are NO_SUCH_FILE; EPERM and EACCES are PERMISSION_DENIED;
 * ENAMETOOLONG and EINVAL are BAD_MESSAGE; everything else (EEXIST, EISDIR,
 * ENOTEMPTY, ENOSPC…) is FAILURE, which callers disambiguate with a fresh stat.
 */
export const STATUS_TABLE: Readonly<Record<number, StatusRow>> = {
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
const LEVEL_TABLE: Readonly<Record<string, StatusRow>> = {
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
 * Translates anything thrown by ssh2 into an {@link FsError}: SFTP statuses by
 * the table, connection failures by ssh2's `level`, and every other error
 * (a dropped connection fails pending requests with a plain Error, sockets with
 * an errno string) as a retryable `FS_IO_ERROR`. Never by message text.
 */
export function toFsError(err: unknown, verb: FsVerb, path: string): FsError {
  if (isFsError(err)) return err
  if (isAbortError(err)) return new FsError('FS_ABORTED', `${verb} aborted`, { cause: err })
  if (err instanceof UnsupportedRequest) {
    return new FsError('FS_UNSUPPORTED', `cannot ${verb} "${path}": ${err.message}`, { cause: err })
  }
  const status = statusOf(err)
  const level = typeof err === 'object' && err !== null ? (err as { level?: unknown }).level : undefined
  const row = status !== undefined ? STATUS_TABLE[status] : typeof level === 'string' ? LEVEL_TABLE[level] : undefined
  if (row !== undefined) {
    return new FsError(row.code, `cannot ${verb} "${path}": ${row.reason}`, { cause: err, retryable: row.retryable ?? false })
  }
  if (status !== undefined) {
    return new FsError('FS_IO_ERROR', `cannot ${verb} "${path}": SFTP status ${status}`, { cause: err })
  }
  const detail = err instanceof Error ? err.message : String(err)
  return new FsError('FS_IO_ERROR', `cannot ${verb} "${path}": connection failed: ${detail}`, { cause: err, retryable: true })
}
