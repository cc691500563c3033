import { accessSync, constants, type BigIntStats } from 'node:fs'
import { FsError, FsVersion, type FsInfo, type FsPathInfo } from '@seamfs/core/backend'

/** `dev:ino:size:mtimeNs:ctimeNs`: ctime catches a same-size rewrite even when mtime was restored. */
export function versionOf(st: BigIntStats): FsVersion {
  return FsVersion(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`)
}

export function typeOf(st: BigIntStats): 'file' | 'directory' | 'other' {
  if (st.isFile()) return 'file'
  return st.isDirectory() ? 'directory' : 'other'
}

/** `stat`'s answer: version, type, a file's size, and the mtime in whole milliseconds. */
export function infoOf(st: BigIntStats): FsInfo {
  const type = typeOf(st)
  const mtime = Number(st.mtimeMs)
  return type === 'file' ? { version: versionOf(st), type, size: Number(st.size), mtime } : { version: versionOf(st), type, mtime }
}

/** `lstat`'s answer: a link is `symlink` (its own version and mtime), anything else as {@link infoOf}. */
export function pathInfoOf(st: BigIntStats): FsPathInfo {
  return st.isSymbolicLink() ? { version: versionOf(st), type: 'symlink', mtime: Number(st.mtimeMs) } : infoOf(st)
}

/**
 * Refuses to replace a write-protected file: one whose mode grants write to no one (`0444`: an
 * editor refuses it, and root's rename would not), or that this process may not write (the
 * kernel's answer for `path`). A rename ignores the file's own
 * mode, so without this a replacement would silently succeed.
 */
export function assertWritable(path: string, st: BigIntStats, verb: 'write' | 'edit' | 'rename', displayPath: string): void {
  const mode = Number(st.mode & 0o777n)
  if ((mode & 0o222) === 0) {
    throw FsError.writeProtected(verb, displayPath, mode)
  }
  accessSync(path, constants.W_OK)
}
