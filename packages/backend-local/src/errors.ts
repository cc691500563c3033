import { errorCodeOf, errnoRow as rowIn, ERRNO_ROWS, FsError, isAbortError, isFsError, type ErrorRow, type FsVerb } from '@seamfs/core/backend'

/** The one translation table from Node errno codes to seamfs codes: core's shared rows, and those only the disk raises. */
export const ERRNO_TABLE: Readonly<Record<string, ErrorRow>> = {
  ...ERRNO_ROWS,
  ENXIO: { code: 'FS_NOT_REGULAR_FILE', reason: 'not a regular file' },
  EROFS: { code: 'FS_PERMISSION_DENIED', reason: 'read-only file system' },
  EFBIG: { code: 'FS_TOO_LARGE', reason: 'file too large' },
  ENAMETOOLONG: { code: 'FS_IO_ERROR', reason: 'file name too long' },
  ENOSPC: { code: 'FS_IO_ERROR', reason: 'no space left on device' },
  EDQUOT: { code: 'FS_IO_ERROR', reason: 'disk quota exceeded' },
  EIO: { code: 'FS_IO_ERROR', reason: 'input/output error', retryable: true },
  EMFILE: { code: 'FS_IO_ERROR', reason: 'too many open files', retryable: true },
  ENFILE: { code: 'FS_IO_ERROR', reason: 'too many open files in system', retryable: true },
  EAGAIN: { code: 'FS_IO_ERROR', reason: 'resource temporarily unavailable', retryable: true },
  EBUSY: { code: 'FS_IO_ERROR', reason: 'resource busy', retryable: true },
  EINTR: { code: 'FS_IO_ERROR', reason: 'interrupted', retryable: true },
  ETXTBSY: { code: 'FS_IO_ERROR', reason: 'text file busy', retryable: true },
  EXDEV: { code: 'FS_IO_ERROR', reason: 'cross-device link' },
  ENOTEMPTY: { code: 'FS_NOT_EMPTY', reason: 'directory not empty' },
  ENOTSUP: { code: 'FS_IO_ERROR', reason: 'operation not supported' },
  EOPNOTSUPP: { code: 'FS_IO_ERROR', reason: 'operation not supported' },
  ERR_FS_FILE_TOO_LARGE: { code: 'FS_TOO_LARGE', reason: 'file too large to read at once' },
  ERR_STRING_TOO_LONG: { code: 'FS_TOO_LARGE', reason: 'text too large to hold as one string' },
}

/** The row of {@link ERRNO_TABLE} for a Node error, by its `code` (never by message). */
export function errnoRow(err: unknown): ErrorRow | undefined {
  return rowIn(err, ERRNO_TABLE)
}

/** The errno code of a Node error, if any. */
export const errnoOf = errorCodeOf

/** A failure whose cleanup failed too: `FS_IO_ERROR`, with both causes named. */
export function doubleFault(verb: FsVerb, path: string, original: unknown, cleanup: unknown): FsError {
  const first = isFsError(original) ? original.message : isAbortError(original) ? `${verb} aborted` : (errnoRow(original)?.reason ?? messageOf(original))
  return FsError.io(verb, path, `${first} (and cleanup failed: ${messageOf(cleanup)})`, {
    cause: new AggregateError([original, cleanup], 'write failed and cleanup failed'),
  })
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
