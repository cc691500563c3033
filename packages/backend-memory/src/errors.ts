import { errorCodeOf, errnoRow, ERRNO_ROWS, type ErrorRow } from '@seamfs/core/backend'

/** The one translation table from memfs error codes (Node errno names) to seamfs codes: core's shared rows, and those only memfs raises. */
export const MEMFS_ERROR_TABLE: Readonly<Record<string, ErrorRow>> = {
  ...ERRNO_ROWS,
  ENOTEMPTY: { code: 'FS_IO_ERROR', reason: 'directory not empty' },
  EMFILE: { code: 'FS_IO_ERROR', reason: 'too many open files' },
  EBADF: { code: 'FS_IO_ERROR', reason: 'bad file descriptor' },
  EINVAL: { code: 'FS_IO_ERROR', reason: 'invalid argument' },
  ERR_INVALID_ARG_TYPE: { code: 'FS_NOT_FOUND', reason: 'invalid path' },
}

/** The row of anything memfs throws, by its code, never by message. */
export function memfsErrorRow(err: unknown): ErrorRow | undefined {
  return errnoRow(err, MEMFS_ERROR_TABLE)
}

/** The code of a memfs error, if any. */
export const codeOf = errorCodeOf
