import { errorCodeOf, type ErrorRow } from './translate.js'

/**
 * The errno rows every backend over a Node-style filesystem API (`node:fs`, memfs) shares, keyed
 * on the error's `code`. A backend's table spreads them and adds only the rows of its own store:
 * `{ ...ERRNO_ROWS, EIO: { … } }`.
 */
export const ERRNO_ROWS: Readonly<Record<string, ErrorRow>> = {
  ENOENT: { code: 'FS_NOT_FOUND', reason: 'not found' },
  ENOTDIR: { code: 'FS_NOT_FOUND', reason: 'a parent path segment is not a directory' },
  ELOOP: { code: 'FS_NOT_FOUND', reason: 'too many levels of symbolic links' },
  EISDIR: { code: 'FS_NOT_REGULAR_FILE', reason: 'not a regular file' },
  EACCES: { code: 'FS_PERMISSION_DENIED', reason: 'permission denied' },
  EPERM: { code: 'FS_PERMISSION_DENIED', reason: 'operation not permitted' },
  EEXIST: { code: 'FS_IO_ERROR', reason: 'already exists' },
  ERR_INVALID_ARG_VALUE: { code: 'FS_NOT_FOUND', reason: 'invalid path' },
}

/** The row of `table` (by default {@link ERRNO_ROWS}) for a Node-style error, by its `code`, never by message. */
export function errnoRow(err: unknown, table: Readonly<Record<string, ErrorRow>> = ERRNO_ROWS): ErrorRow | undefined {
  const code = errorCodeOf(err)
  return code === undefined ? undefined : table[code]
}
