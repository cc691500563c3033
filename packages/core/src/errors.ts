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
 * - `FS_SANDBOX_DENIED` — a fence refused the access (a policy decision): the sandbox, or a backend's
 *   `root` scope, which is a fence on every backend.
 * - `FS_IO_ERROR` — any other store failure; `retryable` says whether trying again may help,
 *   `indeterminate` whether a mutation may have taken effect although it failed.
 * - `FS_STALE_VERSION` — a guard's version no longer matches, or the target vanished.
 * - `FS_NOT_OBSERVED` — `createIfAbsent` found a file, or the policy has no observation.
 * - `FS_AMBIGUOUS_EDIT` — `oldString` matched more than once without `replaceAll`.
 * - `FS_EDIT_NOT_FOUND` — `oldString` is empty or matched nothing.
 * - `FS_ABORTED` — the caller's signal was aborted.
 * - `FS_TOO_LARGE` — the content exceeds a limit the backend or caller set.
 * - `FS_UNSUPPORTED` — the backend cannot honour this operation or guard.
 * - `FS_NOT_EMPTY` — a remove of a directory that has entries, without `recursive`.
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
  | 'FS_NOT_EMPTY'

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
  'FS_NOT_EMPTY',
])

const CODE_SET: ReadonlySet<string> = new Set(FS_ERROR_CODES)

/** Structured facts some errors carry, so a caller never parses the message. */
export interface FsErrorDetails {
  /** How many times `oldString` matched (`FS_AMBIGUOUS_EDIT`). */
  readonly matches?: number
  /** The byte size found (`FS_TOO_LARGE`). */
  readonly size?: number
  /** The byte limit that was exceeded (`FS_TOO_LARGE`). */
  readonly limit?: number
  /** Which edit of a list failed (0-based), when `editText` was given several. */
  readonly edit?: number
  /** How many entries a recursive remove found (`FS_TOO_LARGE` above its bound). */
  readonly entries?: number
}

/** Options of {@link FsError}. */
export interface FsErrorOptions {
  /** The foreign error this one translates. */
  readonly cause?: unknown
  /** Whether the same call may succeed if tried again (network drops, EMFILE…). */
  readonly retryable?: boolean
  /** The mutation may have taken effect: see {@link FsError.indeterminate}. */
  readonly indeterminate?: boolean
  readonly details?: FsErrorDetails
  /** The contract operation that failed (see {@link FsError.verb}). */
  readonly verb?: FsVerb | undefined
  /** The path the failure is about, as displayed (see {@link FsError.path}). */
  readonly path?: string | undefined
  /** The failure's own words, without the operation and path (see {@link FsError.reason}). */
  readonly reason?: string | undefined
}

/** The verbs that change the store: only their failures can be {@link FsError.indeterminate}. */
export const MUTATION_VERBS: ReadonlySet<FsVerb> = new Set<FsVerb>(['write', 'edit', 'remove', 'rename', 'create directory'])

/** The verbs used in messages: `cannot <verb> "<path>": …` and `<verb> aborted`. */
export type FsVerb = 'resolve' | 'stat' | 'lstat' | 'read' | 'list' | 'write' | 'edit' | 'remove' | 'rename' | 'create directory'

/**
 * The one error type of seamfs. Check it with {@link isFsError} (by code), not
 * `instanceof`: two installed copies of this package break `instanceof`.
 *
 * The contract's failures have named constructors (`FsError.notFound(verb, path)`…):
 * every backend builds them through these, so each message shape is written once
 * (`cannot <verb> "<path>": <reason>`). A lint rule forbids `new FsError` in backends.
 *
 * Its facts are fields, never only prose: {@link code}, {@link verb} and {@link path} (as Go's
 * `PathError` carries `Op` and `Path`), {@link retryable}, {@link indeterminate} and
 * {@link details}. Every error a `FileSystem` public method throws has `verb` and `path` (core
 * fills them in for an error a hook built without them); read them instead of the message.
 */
export class FsError extends Error {
  override readonly name = 'FsError'
  readonly code: FsErrorCode
  readonly retryable: boolean
  /**
   * The outcome is not known: a mutation's request went out (or may have) and its answer
   * was lost — the connection died, the caller's signal or deadline ended the wait — so the change
   * may have been made although the call failed. Re-read the target before trying again. An error
   * without it (`false`) is a definite failure: the mutation did not happen. Only failures of
   * mutations (`write`, `edit`, `remove`, `rename`, `create directory`) carry it.
   */
  readonly indeterminate: boolean
  readonly details: FsErrorDetails | undefined
  /**
   * The contract operation that failed (`read`, `write`, `rename`…). Set on every error a
   * `FileSystem` public method throws; `undefined` only on an error built outside one.
   */
  readonly verb: FsVerb | undefined
  /**
   * The path the failure is about, as displayed (the target's `displayPath`, or the path text given
   * to `resolve`/`lstat`): for a rename, the source, or the destination when the failure is the
   * destination's. Raw: quote it before showing it to a model. Set wherever `verb` is.
   */
  readonly path: string | undefined
  /**
   * The failure's own words, without the operation and path, where the message has the shape
   * `cannot <verb> "<path>": <reason>` (every error `FsError.at` and the constructors built on it
   * make): for a caller that words the failure its own way around the path.
   */
  readonly reason: string | undefined

  constructor(code: FsErrorCode, message: string, options: FsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.retryable = options.retryable ?? false
    this.indeterminate = options.indeterminate ?? false
    this.details = options.details
    this.verb = options.verb
    this.path = options.path
    this.reason = options.reason
  }

  /** The options that rebuild `err` (for a copy that changes one of them). */
  static optionsOf(err: FsError): FsErrorOptions {
    return {
      cause: err.cause,
      retryable: err.retryable,
      indeterminate: err.indeterminate,
      ...(err.details && { details: err.details }),
      verb: err.verb,
      path: err.path,
      reason: err.reason,
    }
  }

  /** The same failure with its outcome unknown ({@link indeterminate}); itself when already so. */
  static indeterminate(err: FsError): FsError {
    if (err.indeterminate) return err
    return new FsError(err.code, err.message, { ...FsError.optionsOf(err), indeterminate: true })
  }

  /**
   * `err` with its {@link verb} and {@link path} filled in where it has none (itself when it has
   * both): how core makes every error of a public method carry them.
   */
  static placed(err: FsError, verb: FsVerb, path: string): FsError {
    if (err.verb !== undefined && err.path !== undefined) return err
    return new FsError(err.code, err.message, { ...FsError.optionsOf(err), verb: err.verb ?? verb, path: err.path ?? path })
  }

  /** `cannot <verb> "<path>": <reason>` with any code: the shape of every path-bound failure. */
  static at(code: FsErrorCode, verb: FsVerb, path: string, reason: string, options?: FsErrorOptions): FsError {
    return new FsError(code, `cannot ${verb} "${path}": ${reason}`, { ...options, verb, path, reason })
  }

  /** `FS_NOT_FOUND`: the path does not exist. */
  static notFound(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_FOUND', verb, path, 'not found', { cause })
  }

  /** `FS_NOT_FOUND`: a path segment before the last is a regular file. */
  static throughFile(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_FOUND', verb, path, 'a parent path segment is not a directory', { cause })
  }

  /** `FS_NOT_FOUND`: symbolic links loop (or nest beyond the store's limit). */
  static linkLoop(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_FOUND', verb, path, 'too many levels of symbolic links', { cause })
  }

  /** `FS_NOT_REGULAR_FILE`: a directory or special file where a file was needed. */
  static notRegularFile(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_REGULAR_FILE', verb, path, 'not a regular file', { cause })
  }

  /** `FS_NOT_DIRECTORY`: a listing of an existing non-directory. */
  static notDirectory(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_DIRECTORY', verb, path, 'not a directory', { cause })
  }

  /** `FS_NOT_EMPTY`: a directory with entries, removed without `recursive`. */
  static notEmpty(verb: FsVerb, path: string, cause?: unknown): FsError {
    return FsError.at('FS_NOT_EMPTY', verb, path, 'directory not empty', { cause })
  }

  /** `FS_NOT_OBSERVED`: a rename's destination `path` exists and `overwrite` was not given. */
  static destinationExists(verb: FsVerb, path: string, cause?: unknown): FsError {
    return new FsError('FS_NOT_OBSERVED', `cannot ${verb} onto existing "${path}" without overwrite (read it first, or pick another name)`, {
      cause,
      verb,
      path,
    })
  }

  /** `FS_STALE_VERSION`: the guarded file is `gone`, or `changed` since the version was taken. */
  static stale(verb: FsVerb, path: string, why: 'gone' | 'changed', cause?: unknown): FsError {
    const reason = why === 'gone' ? 'file no longer exists' : 'file changed since it was read'
    return FsError.at('FS_STALE_VERSION', verb, path, reason, { cause })
  }

  /** `FS_NOT_OBSERVED`: `createIfAbsent` found an existing file. */
  static notObserved(path: string, cause?: unknown): FsError {
    return new FsError('FS_NOT_OBSERVED', `cannot overwrite existing "${path}" without reading it first`, { cause, verb: 'write', path })
  }

  /**
   * `FS_NOT_OBSERVED` from the read-before-write policy: the caller has not read `path` (`unseen`), so
   * it may not `edit`, `remove` or `move` it. `move` is the tools' word for `rename`.
   */
  static unseen(verb: 'edit' | 'remove' | 'move', path: string): FsError {
    return new FsError('FS_NOT_OBSERVED', `${verb} requires reading "${path}" first`, { verb: verb === 'move' ? 'rename' : verb, path })
  }

  /**
   * `FS_PERMISSION_DENIED`: the file's mode grants write permission to no one (`mode & 0o222` is 0,
   * e.g. 0444); a write, edit or remove of it is refused as an editor refuses it.
   */
  static writeProtected(verb: FsVerb, path: string, mode: number): FsError {
    return FsError.at('FS_PERMISSION_DENIED', verb, path, `the file is write-protected (mode 0${(mode & 0o7777).toString(8).padStart(3, '0')})`)
  }

  /**
   * `FS_PERMISSION_DENIED`: the root of the store (the directory `resolve('/')` names; a backend's
   * `root` scope) is never removed or moved, whatever the store would allow. Core decides it, once,
   * for every backend, before any hook.
   */
  static storeRoot(verb: FsVerb, path: string): FsError {
    return FsError.at('FS_PERMISSION_DENIED', verb, path, "the store's root directory cannot be removed or moved")
  }

  /** `FS_PERMISSION_DENIED`: the store does not write (`capabilities.readOnly`), or the path lies in a read-only mount (`where`). */
  static readOnly(verb: FsVerb, path: string, where = 'read-only store'): FsError {
    return FsError.at('FS_PERMISSION_DENIED', verb, path, where)
  }

  /** `FS_SANDBOX_DENIED`: a fence (the sandbox, a backend's `root` scope) refused the access; `reason` says which rule. */
  static sandboxDenied(verb: FsVerb, path: string, reason: string, cause?: unknown): FsError {
    return FsError.at('FS_SANDBOX_DENIED', verb, path, reason, { cause })
  }

  /** `FS_TOO_LARGE`: `size` bytes exceed the `limit` on text held as one string. */
  static tooLarge(verb: FsVerb, path: string, size: number, limit: number): FsError {
    return FsError.at('FS_TOO_LARGE', verb, path, `${size} bytes exceed the ${limit}-byte limit on whole-file text`, {
      details: { size, limit },
    })
  }

  /** `FS_TOO_LARGE`: a recursive remove found more than `limit` entries (`entries` is how many it counted, at least `limit + 1`). */
  static tooManyEntries(verb: FsVerb, path: string, entries: number, limit: number): FsError {
    return FsError.at('FS_TOO_LARGE', verb, path, `more than ${limit} entries to remove (a recursive remove is bounded)`, { details: { entries, limit } })
  }

  /** `FS_UNSUPPORTED`: this backend cannot honour the operation or guard. */
  static unsupported(verb: FsVerb, path: string, reason: string, cause?: unknown): FsError {
    return FsError.at('FS_UNSUPPORTED', verb, path, reason, { cause })
  }

  /** `FS_IO_ERROR` for a store failure; `retryable` when trying again may help. */
  static io(verb: FsVerb, path: string, reason: string, options?: FsErrorOptions): FsError {
    return FsError.at('FS_IO_ERROR', verb, path, reason, options)
  }

  /** `FS_ABORTED` (`<verb> aborted`), with the signal's reason as cause; `indeterminate` when the mutation may still land. */
  static aborted(verb: FsVerb, reason?: unknown, options: { readonly indeterminate?: boolean; readonly path?: string | undefined } = {}): FsError {
    const indeterminate = options.indeterminate === true
    const message = indeterminate ? `${verb} aborted (it may still have taken effect)` : `${verb} aborted`
    return new FsError('FS_ABORTED', message, { cause: reason, indeterminate, verb, path: options.path })
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

/** Throws `FS_ABORTED` (`<verb> aborted`) when the signal is already aborted; `path` fills {@link FsError.path}. */
export function throwIfAborted(signal: AbortSignal | undefined, verb: FsVerb, path?: string): void {
  if (signal?.aborted === true) throw FsError.aborted(verb, signal.reason, { path })
}

/** The `FS_ABORTED` error for `verb`, with the signal's reason as cause. */
export function abortedError(verb: FsVerb, reason?: unknown): FsError {
  return FsError.aborted(verb, reason)
}

/** True for the errors Node and the web platform raise when a signal aborts an operation. */
export function isAbortError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { name?: unknown; code?: unknown }
  return e.name === 'AbortError' || e.code === 'ABORT_ERR'
}
