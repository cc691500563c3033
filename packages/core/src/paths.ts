import { FsError, type FsVerb } from './errors.js'
import type { FsTarget, FsVersion, FsWriteIntent } from './types.js'

const NORMALIZED_ABSOLUTE = /^(?:\/(?!\.\.?(?:\/|$))[^/\0]+)+$|^\/$/

/** Whether `path` is a POSIX path `posix.resolve` would return unchanged: absolute, no empty, `.` or `..` segment, no trailing `/`, no NUL. */
export function isNormalizedAbsolute(path: string): boolean {
  return NORMALIZED_ABSOLUTE.test(path)
}

/**
 * Rejects what can never name a file, the same way on every backend, with
 * `FS_NOT_FOUND`: a non-string or blank path, a NUL byte, and a lone surrogate
 * (it has no UTF-8 form: a store would get U+FFFD, so two different paths would
 * name one file under two keys).
 */
export function assertPathText(path: unknown, verb: FsVerb): asserts path is string {
  if (typeof path !== 'string' || path.trim() === '') {
    throw new FsError('FS_NOT_FOUND', 'a path must be a non-empty string', { verb, path: typeof path === 'string' ? path : '' })
  }
  if (path.includes('\0')) {
    throw FsError.at('FS_NOT_FOUND', verb, path.replaceAll('\0', '\\0'), 'path contains a NUL byte')
  }
  if (!path.isWellFormed()) {
    throw FsError.at('FS_NOT_FOUND', verb, path.toWellFormed(), 'path is not well-formed Unicode')
  }
}

/** Like {@link assertPathText} for an optional `cwd` option. */
export function assertCwdText(cwd: unknown, path: string, verb: FsVerb): asserts cwd is string | undefined {
  if (cwd === undefined) return
  if (typeof cwd !== 'string' || cwd.includes('\0') || !cwd.isWellFormed()) {
    throw FsError.at('FS_NOT_FOUND', verb, path, 'invalid cwd')
  }
}

/**
 * Rejects a write guard this contract does not define with `FS_UNSUPPORTED`:
 * a guard is never silently dropped (which would turn it into an overwrite).
 */
export function assertWriteIntent(expected: unknown, path: string): void {
  if (expected === undefined) return
  const kind = typeof expected === 'object' && expected !== null ? (expected as { kind?: unknown }).kind : undefined
  if (kind === 'createIfAbsent') return
  if (kind === 'replaceIfVersion' && typeof (expected as { version?: unknown }).version === 'string') return
  throw FsError.unsupported('write', path, `unknown guard ${JSON.stringify(kind) ?? String(kind)}`)
}

/** Rejects what is not a target (`{ targetKey, displayPath }` strings) with `FS_NOT_FOUND`. */
export function assertTarget(target: unknown, verb: FsVerb): asserts target is FsTarget {
  const t = target as Partial<Record<keyof FsTarget, unknown>> | null
  if (typeof t !== 'object' || t === null || typeof t.targetKey !== 'string' || typeof t.displayPath !== 'string') {
    throw new FsError('FS_NOT_FOUND', `cannot ${verb}: not a target (resolve the path first)`, { verb, path: '' })
  }
}

/** Rejects a version guard that is not `{ version: string }` with `FS_UNSUPPORTED`: never dropped. */
export function assertEditGuard(expected: unknown, path: string, verb: FsVerb = 'edit'): asserts expected is { readonly version: FsVersion } | undefined {
  if (expected === undefined || isVersionGuard(expected)) return
  throw FsError.unsupported(verb, path, 'a guard must be { version }')
}

/** Rejects a rename's `overwrite` that is not a boolean or `{ version: string }` with `FS_UNSUPPORTED`. */
export function assertOverwrite(overwrite: unknown, path: string): asserts overwrite is boolean | { readonly version: FsVersion } | undefined {
  if (overwrite === undefined || typeof overwrite === 'boolean' || isVersionGuard(overwrite)) return
  throw FsError.unsupported('rename', path, 'overwrite must be true, false or { version }')
}

function isVersionGuard(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { version?: unknown }).version === 'string'
}

/**
 * The one check of a guard a backend enforces itself (a `'process'` guard, or any guard of a
 * store without conditional writes), inside its critical section. `current` is the version
 * of the file now, `undefined` when there is none. For an edit a missing file is
 * `FS_STALE_VERSION` even without a guard.
 * - `createIfAbsent` and a file → `FS_NOT_OBSERVED`;
 * - `replaceIfVersion` (or an edit's `{ version }`) and no file → `FS_STALE_VERSION` (gone);
 * - another version → `FS_STALE_VERSION` (changed);
 * - no guard: an edit of no file is `FS_STALE_VERSION` (gone), a remove or rename of no file `FS_NOT_FOUND`.
 */
export function checkGuard(
  verb: 'write' | 'edit' | 'remove' | 'rename',
  path: string,
  expected: FsWriteIntent | { readonly version: FsVersion } | undefined,
  current: FsVersion | undefined,
): void {
  if (expected === undefined) {
    if (verb === 'edit' && current === undefined) throw FsError.stale(verb, path, 'gone')
    if ((verb === 'remove' || verb === 'rename') && current === undefined) throw FsError.notFound(verb, path)
    return
  }
  if ('kind' in expected && expected.kind === 'createIfAbsent') {
    if (current !== undefined) throw FsError.notObserved(path)
    return
  }
  if (current === undefined) throw FsError.stale(verb, path, 'gone')
  if (current !== expected.version) throw FsError.stale(verb, path, 'changed')
}
