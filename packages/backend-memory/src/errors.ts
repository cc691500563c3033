import { FsError, isAbortError, isFsError, type FsErrorCode, type FsVerb } from '@seamfs/core'

interface CodeRow {
  readonly code: FsErrorCode
  readonly reason: string
}

/** The one translation table from memfs error codes (Node errno names) to seamfs codes. */
export const MEMFS_ERROR_TABLE: Readonly<Record<string, CodeRow>> = {
  ENOENT: { code: 'FS_NOT_FOUND', reason: 'not found' },
  ENOTDIR: { code: 'FS_NOT_FOUND', reason: 'a parent path segment is not a directory' },
  ELOOP: { code: 'FS_NOT_FOUND', reason: 'too many levels of symbolic links' },
  EISDIR: { code: 'FS_NOT_REGULAR_FILE', reason: 'not a regular file' },
  EACCES: { code: 'FS_PERMISSION_DENIED', reason: 'permission denied' },
  EPERM: { code: 'FS_PERMISSION_DENIED', reason: 'operation not permitted' },
  EEXIST: { code: 'FS_IO_ERROR', reason: 'already exists' },
  ENOTEMPTY: { code: 'FS_IO_ERROR', reason: 'directory not empty' },
  EMFILE: { code: 'FS_IO_ERROR', reason: 'too many open files' },
  EBADF: { code: 'FS_IO_ERROR', reason: 'bad file descriptor' },
  EINVAL: { code: 'FS_IO_ERROR', reason: 'invalid argument' },
  ERR_INVALID_ARG_TYPE: { code: 'FS_NOT_FOUND', reason: 'invalid path' },
  ERR_INVALID_ARG_VALUE: { code: 'FS_NOT_FOUND', reason: 'invalid path' },
}

/** Translates anything memfs throws into an {@link FsError}, by code, never by message. */
export function toFsError(err: unknown, verb: FsVerb, path: string): FsError {
  if (isFsError(err)) return err
  if (isAbortError(err)) return new FsError('FS_ABORTED', `${verb} aborted`, { cause: err })
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  const row = typeof code === 'string' ? MEMFS_ERROR_TABLE[code] : undefined
  if (row !== undefined) return new FsError(row.code, `cannot ${verb} "${path}": ${row.reason}`, { cause: err })
  const detail = err instanceof Error ? err.message : String(err)
  return new FsError('FS_IO_ERROR', `cannot ${verb} "${path}": ${detail}`, { cause: err })
}

/** The code of a memfs error, if any. */
export function codeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'string' ? code : undefined
}
