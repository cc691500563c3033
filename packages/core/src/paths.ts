import { FsError, type FsVerb } from './errors.js'

/**
 * Rejects what can never name a file, the same way on every backend, with
 * `FS_NOT_FOUND`: a non-string or blank path, a NUL byte, and a lone surrogate
 * (it has no UTF-8 form: a store would get U+FFFD, so two different paths would
 * name one file under two keys).
 */
export function assertPathText(path: unknown, verb: FsVerb): asserts path is string {
  if (typeof path !== 'string' || path.trim() === '') {
    throw new FsError('FS_NOT_FOUND', 'file_path must be a non-empty string')
  }
  if (path.includes('\0')) {
    throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${path.replaceAll('\0', '\\0')}": path contains a NUL byte`)
  }
  if (!path.isWellFormed()) {
    throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${path.toWellFormed()}": path is not well-formed Unicode`)
  }
}

/** Like {@link assertPathText} for an optional `cwd` option. */
export function assertCwdText(cwd: unknown, path: string, verb: FsVerb): asserts cwd is string | undefined {
  if (cwd === undefined) return
  if (typeof cwd !== 'string' || cwd.includes('\0') || !cwd.isWellFormed()) {
    throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${path}": invalid cwd`)
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
  throw new FsError('FS_UNSUPPORTED', `cannot write "${path}": unknown guard ${JSON.stringify(kind) ?? String(kind)}`)
}
