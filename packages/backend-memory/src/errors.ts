import { errorCodeOf, type ErrorRow } from '@seamfs/core/backend'

/** The one translation table from memfs error codes (Node errno names) to seamfs codes. */
export const MEMFS_ERROR_TABLE: Readonly<Record<string, ErrorRow>> = {
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

/** The row of anything memfs throws, by its code, never by message. */
export function memfsErrorRow(err: unknown): ErrorRow | undefined {
  const code = errorCodeOf(err)
  return code === undefined ? undefined : MEMFS_ERROR_TABLE[code]
}

/** The code of a memfs error, if any. */
export const codeOf = errorCodeOf
