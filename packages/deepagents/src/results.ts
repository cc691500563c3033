import { isFsError } from '@seamfs/core'
import { toolFailure } from '@seamfs/tools'
import type { FileOperationError } from 'deepagents'

/**
 * A failure of a call this package makes itself (a refused path, binary reads and writes,
 * listings, transfers) as the model reads it: the seamfs tools' own failure text (`Error: <message>`,
 * the remedy of a refused mutation, control characters escaped, a long text cut at
 * `MAX_ERROR_CHARS`), so every deepagents tool words it alike; with `toolVerb` (`delete`) in place
 * of the contract's verb.
 */
export function errorText(err: unknown, toolVerb?: string): string {
  return toolFailure(err, toolVerb).text
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
