/**
 * Stable, machine-routable failure codes. Every failure of every backend is an
 * {@link FsError} carrying exactly one of these; retry, permission and UI layers
 * branch on the code, never on message text.
 *
 * - `FS_NOT_FOUND` — the path does not exist, is blank, or runs through a regular file.
 * - `FS_NOT_DIRECTORY` — a listing of an existing non-directory.
 * - `FS_NOT_TEXT` — a NUL byte in the first 8192 bytes, or invalid UTF-8 anywhere.
 * - `FS_NOT_REGULAR_FILE` — a read, write or edit of a directory or special file.
 * - `FS_PERMISSION_DENIED` — the store (kernel, server, credentials) refused.
 * - `FS_SANDBOX_DENIED` — the sandbox fence refused a mutation (a policy decision).
 * - `FS_IO_ERROR` — any other store failure; `retryable` says whether trying again may help.
 * - `FS_STALE_VERSION` — a guard's version no longer matches, or the target vanished.
 * - `FS_NOT_OBSERVED` — `createIfAbsent` found a file, or the policy has no observation.
 * - `FS_AMBIGUOUS_EDIT` — `oldString` matched more than once without `replaceAll`.
 * - `FS_EDIT_NOT_FOUND` — `oldString` is empty or matched nothing.
 * - `FS_ABORTED` — the caller's signal was aborted.
 * - `FS_TOO_LARGE` — the content exceeds a limit the backend or caller set.
 * - `FS_UNSUPPORTED` — the backend cannot honour this operation or guard.
 */
export type FsErrorCode =
  | 'FS_NOT_FOUND'
  | 'FS_NOT_DIRECTORY'
  | 'FS_NOT_TEXT'
  | 'FS_NOT_REGULAR_FILE'
  | 'FS_PERMISSION_DENIED'
  | 'FS_SANDBOX_DENIED'
  | 'FS_IO_ERROR'
  | 'FS_STALE_VERSION'
  | 'FS_NOT_OBSERVED'
  | 'FS_AMBIGUOUS_EDIT'
  | 'FS_EDIT_NOT_FOUND'
  | 'FS_ABORTED'
  | 'FS_TOO_LARGE'
  | 'FS_UNSUPPORTED'

/** Every {@link FsErrorCode}, for validation and exhaustive tables. */
export const FS_ERROR_CODES: readonly FsErrorCode[] = Object.freeze([
  'FS_NOT_FOUND',
  'FS_NOT_DIRECTORY',
  'FS_NOT_TEXT',
  'FS_NOT_REGULAR_FILE',
  'FS_PERMISSION_DENIED',
  'FS_SANDBOX_DENIED',
  'FS_IO_ERROR',
  'FS_STALE_VERSION',
  'FS_NOT_OBSERVED',
  'FS_AMBIGUOUS_EDIT',
  'FS_EDIT_NOT_FOUND',
  'FS_ABORTED',
  'FS_TOO_LARGE',
  'FS_UNSUPPORTED',
])

const CODE_SET: ReadonlySet<string> = new Set(FS_ERROR_CODES)

/** Options of {@link FsError}. */
export interface FsErrorOptions {
  /** The foreign error this one translates. */
  readonly cause?: unknown
  /** Whether the same call may succeed if tried again (network drops, EMFILE…). */
  readonly retryable?: boolean
}

/**
 * The one error type of seamfs. Check it with {@link isFsError} (by code), not
 * `instanceof`: two installed copies of this package break `instanceof`.
 */
export class FsError extends Error {
  override readonly name = 'FsError'
  readonly code: FsErrorCode
  readonly retryable: boolean

  constructor(code: FsErrorCode, message: string, options: FsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.retryable = options.retryable ?? false
  }
}

/**
 * True when `err` is an {@link FsError} (from any copy of this package) and,
 * when `code` is given, carries that code.
 */
export function isFsError(err: unknown, code?: FsErrorCode): err is FsError {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { name?: unknown; code?: unknown }
  if (e.name !== 'FsError' || typeof e.code !== 'string' || !CODE_SET.has(e.code)) return false
  return code === undefined || e.code === code
}

/** The verbs used in messages: `cannot <verb> "<path>": …` and `<verb> aborted`. */
export type FsVerb = 'resolve' | 'stat' | 'lstat' | 'read' | 'list' | 'write' | 'edit'

/** Throws `FS_ABORTED` (`<verb> aborted`) when the signal is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, verb: FsVerb): void {
  if (signal?.aborted === true) throw abortedError(verb, signal.reason)
}

/** The `FS_ABORTED` error for `verb`, with the signal's reason as cause. */
export function abortedError(verb: FsVerb, reason?: unknown): FsError {
  return new FsError('FS_ABORTED', `${verb} aborted`, { cause: reason })
}

/** True for the errors Node and the web platform raise when a signal aborts an operation. */
export function isAbortError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { name?: unknown; code?: unknown }
  return e.name === 'AbortError' || e.code === 'ABORT_ERR'
}
