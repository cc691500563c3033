import { posix } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import type { Session } from './connection.js'
import { STATUS, statusOf } from './errors.js'

/** Linux's SYMLOOP_MAX: how many dangling links `canonicalPath` follows. */
const MAX_LINK_HOPS = 40
/** POSIX S_IFMT and the types seamfs tells apart. */
const S_IFMT = 0o170000
const S_IFREG = 0o100000
const S_IFDIR = 0o040000
const S_IFLNK = 0o120000

export type Kind = 'file' | 'directory' | 'symlink' | 'other'

/** The kind of an SFTP `mode`. */
export function kindOf(mode: number): Kind {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return 'file'
    case S_IFDIR:
      return 'directory'
    case S_IFLNK:
      return 'symlink'
    default:
      return 'other'
  }
}

/** True when `child` is `parent` or below it (both absolute, normalized). */
export function containsPath(parent: string, child: string): boolean {
  if (child === parent) return true
  return child.startsWith(parent === '/' ? '/' : `${parent}/`)
}

/** `parent/name` for normalized absolute paths. */
export function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`
}

/**
 * The error of a path that leaves the root (lexically or through a symlink): the root is a fence,
 * so this is `FS_SANDBOX_DENIED` (the same code the sandbox gives on every backend), not the
 * server's own `FS_PERMISSION_DENIED`.
 */
export function outsideRoot(verb: FsVerb, path: string, root: string): FsError {
  return FsError.sandboxDenied(verb, path, `outside the root "${root}"`)
}

/**
 * The canonical remote path of `abs` (absolute, lexically normalized), as the
 * server resolves it: its `realpath` when that exists (OpenSSH's realpath also
 * accepts a missing last segment, and follows a dangling link to the path it
 * names); for a deeper missing path, the canonical parent plus the missing
 * name, with dangling links followed (`lstat` + `readlink`) so that writing
 * through one creates its target and keeps the link.
 */
export async function canonicalPath(s: Session, abs: string, verb: FsVerb, hops = 0): Promise<string> {
  try {
    return await s.realpath(abs)
  } catch (err) {
    if (statusOf(err) !== STATUS.NO_SUCH_FILE) throw err
  }
  const parent = posix.dirname(abs)
  if (parent === abs) return abs
  const dir = await canonicalPath(s, parent, verb, hops)
  const here = childPath(dir, posix.basename(abs))
  const [dirAttrs, link] = await Promise.allSettled([s.stat(dir), s.lstat(here)])
  if (dirAttrs.status === 'fulfilled' && kindOf(dirAttrs.value.mode) !== 'directory') throw FsError.throughFile(verb, abs)
  if (dirAttrs.status === 'rejected' && statusOf(dirAttrs.reason) !== STATUS.NO_SUCH_FILE) throw dirAttrs.reason
  if (link.status === 'fulfilled' && kindOf(link.value.mode) === 'symlink') {
    if (hops >= MAX_LINK_HOPS) throw FsError.linkLoop(verb, abs)
    return canonicalPath(s, posix.resolve(dir, await s.readlink(here)), verb, hops + 1)
  }
  return here
}
