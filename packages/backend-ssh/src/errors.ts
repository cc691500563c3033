import type { ErrorRow } from '@seamfs/core/backend'

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
 * The row of anything ssh2 (or the connection handling) throws: SFTP statuses by
 * the table, connection failures by ssh2's `level`, and every other error (a
 * dropped connection fails pending requests with a plain Error, sockets with an
 * errno string) a retryable `FS_IO_ERROR`. Never by message text.
 */
export function sftpErrorRow(err: unknown): ErrorRow {
  if (err instanceof ConnectionFailure) return err.row
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
