import { FsError, isFsError } from '@seamfs/core'
import type { ToolResult } from './types.js'

/** A bad argument: reported as `Error: <message>`, without a filesystem code. */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError'
}

export function ok<V>(text: string, value: V): ToolResult<V> {
  return { text, isError: false, value }
}

/** Any failure as the model sees it: `Error: <message>`, with the code when there is one. Never throws. */
export function failure(err: unknown): ToolResult<never> {
  if (isFsError(err)) return { text: `Error: ${err.message}`, isError: true, code: err.code }
  if (err instanceof ToolInputError) return { text: `Error: ${err.message}`, isError: true }
  const detail = err instanceof Error ? err.message : String(err)
  return { text: `Error: internal error: ${detail}`, isError: true, code: 'FS_IO_ERROR' }
}

/**
 * The model-facing remedy for a refused mutation, added only here, at the tool
 * boundary (backend messages stay machine-oriented). Keeps the code and cause.
 */
export function withRemedy(err: unknown): unknown {
  if (isFsError(err, 'FS_STALE_VERSION')) {
    return new FsError(err.code, `${err.message} — re-read the file, then retry`, { cause: err, retryable: err.retryable })
  }
  if (isFsError(err, 'FS_NOT_OBSERVED')) {
    return new FsError(err.code, `${err.message} — read the file, then retry`, { cause: err, retryable: err.retryable })
  }
  return err
}
