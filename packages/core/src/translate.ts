import { FsError, isAbortError, isFsError, MUTATION_VERBS, type FsErrorCode, type FsVerb } from './errors.js'

/** One row of a backend's error table: the seamfs code, the reason shown in the message. */
export interface ErrorRow {
  readonly code: FsErrorCode
  readonly reason: string
  readonly retryable?: boolean | undefined
  /**
   * The request may have reached the store and its answer was lost (a connection that died with
   * the request in flight): a mutation that meets it is {@link FsError.indeterminate}. A failure
   * known to come before anything was sent (connection refused, host not found) leaves it unset.
   */
  readonly lostAnswer?: boolean | undefined
}

/**
 * The one shape of every backend's error translation: an `FsError` passes
 * through (given `verb` and `path` where it has none), an abort is `FS_ABORTED` (`<verb> aborted`), anything the backend's
 * `lookup` finds in its table becomes `cannot <verb> "<path>": <reason>` with the
 * row's code, and the rest is `FS_IO_ERROR` with the foreign message. The
 * foreign error is always the `cause`; no message text is ever parsed.
 */
export function translateError(err: unknown, verb: FsVerb, path: string, lookup: (err: unknown) => ErrorRow | undefined): FsError {
  if (isFsError(err)) return FsError.placed(err, verb, path)
  if (isAbortError(err)) return FsError.aborted(verb, err, { path })
  const row = lookup(err)
  if (row !== undefined) {
    const indeterminate = row.lostAnswer === true && MUTATION_VERBS.has(verb)
    return FsError.at(row.code, verb, path, row.reason, { cause: err, retryable: row.retryable ?? false, indeterminate })
  }
  const detail = err instanceof Error ? err.message : String(err)
  return FsError.io(verb, path, detail, { cause: err })
}

/** The string `code` property of a foreign error (Node errno names, memfs codes), if any. */
export function errorCodeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'string' ? code : undefined
}

/**
 * One value per process under `name`, whichever copy of a seamfs package asks
 * first: two installed copies share one pid, so a lock or an in-flight set
 * must be shared through the global object, not a module variable.
 */
export function processWide<T>(name: string, create: () => T): T {
  const registry = globalThis as unknown as Record<symbol, T | undefined>
  const key = Symbol.for(`@seamfs/${name}`)
  return (registry[key] ??= create())
}
