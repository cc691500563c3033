import { isFsError } from '@seamfs/core'
import type { FileOperationError } from 'deepagents'

/**
 * A failure of a call this package makes on the contract itself (binary reads and writes,
 * listings, transfers) as the model reads it: `Error: <message>`, with the remedy the tools add
 * to a refused mutation (re-read, then retry), so every deepagents tool words it alike.
 */
export function errorText(err: unknown): string {
  if (isFsError(err, 'FS_STALE_VERSION')) return `Error: ${err.message} — re-read the file, then retry`
  if (isFsError(err, 'FS_NOT_OBSERVED')) return `Error: ${err.message} — read the file, then retry`
  if (isFsError(err)) return `Error: ${err.message}`
  return `Error: internal error: ${err instanceof Error ? err.message : String(err)}`
}

/** `text` without its leading `Error: `: for the deepagents tools that add their own prefix (`read_file`, `ls`, `glob`). */
export function withoutPrefix(text: string): string {
  return text.startsWith('Error: ') ? text.slice('Error: '.length) : text
}

/**
 * The code deepagents' `uploadFiles`/`downloadFiles` report for a failure: its union has four
 * codes, so a file above the transfer limit, a path that escapes the root and anything else
 * unforeseen is `invalid_path`, as in deepagents' own `FilesystemBackend`.
 */
export function transferError(err: unknown): FileOperationError {
  if (isFsError(err, 'FS_NOT_FOUND')) return 'file_not_found'
  if (isFsError(err, 'FS_PERMISSION_DENIED')) return 'permission_denied'
  if (isFsError(err, 'FS_NOT_REGULAR_FILE')) return 'is_directory'
  return 'invalid_path'
}
