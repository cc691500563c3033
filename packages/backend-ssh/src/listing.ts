import { FsTargetKey, type FsDirEntry, type FsTarget } from '@seamfs/core/backend'
import type { FileEntryWithStats } from 'ssh2'
import type { Attrs, Session } from './connection.js'
import type { FileHints } from './hints.js'
import { isReservedName } from './names.js'
import { canonicalPath, childPath, containsPath, kindOf } from './paths.js'

/** SFTP's whole-second mtime in milliseconds. */
export function mtimeOf(attrs: Attrs): number {
  return attrs.mtime * 1000
}

/** True for an entry listings never show: a stage, temp file or lock entry (a file or directory with a reserved name). */
export function hidden(e: FileEntryWithStats): boolean {
  const kind = kindOf(e.attrs.mode)
  return isReservedName(e.filename) && (kind === 'file' || kind === 'directory')
}

/** The directory a listing is of, and what its entries are looked at with. */
export interface ListingSite {
  readonly s: Session
  /** The canonical root: a link that leads out of it is `other`. */
  readonly root: string
  /** The directory's canonical key. */
  readonly key: string
  readonly dir: FsTarget
  /** Where the files listed are noted. */
  readonly hints: FileHints
}

/**
 * The entry `e` of a checked listing of `dir`: files, directories and others from the listing's
 * (lstat) attrs; a link followed on the server, and `other` (with no mtime to give away) when
 * broken, looping or leading out of `root`. Files are noted in `hints`.
 */
export async function dirEntry({ s, root, key, dir, hints }: ListingSite, e: FileEntryWithStats): Promise<FsDirEntry> {
  const name = e.filename
  const child = { targetKey: FsTargetKey(childPath(key, name)), displayPath: childPath(dir.displayPath, name) }
  const kind = kindOf(e.attrs.mode)
  const mtime = mtimeOf(e.attrs)
  if (kind === 'file') {
    hints.saw(child.targetKey, e.attrs)
    return { name, type: 'file', target: child, size: e.attrs.size, mtime }
  }
  if (kind !== 'symlink') return { name, type: kind === 'directory' ? kind : 'other', target: child, mtime }
  const [real, linked] = await Promise.all([s.realpath(child.targetKey).catch(() => undefined), s.stat(child.targetKey).catch(() => undefined)])
  if (real === undefined || linked === undefined || !containsPath(root, real)) return { name, type: 'other', target: await brokenTarget(s, root, child) }
  const followed = { targetKey: FsTargetKey(real), displayPath: child.displayPath }
  const type = kindOf(linked.mode)
  if (type === 'file') return { name, type, target: followed, size: linked.size, mtime: mtimeOf(linked) }
  return { name, type: type === 'directory' ? type : 'other', target: followed, mtime: mtimeOf(linked) }
}

/**
 * The target of a broken link's entry: what `resolve` gives its path (a dangling link followed to the
 * missing path it names, where a write creates the file) while that lies inside `root`; otherwise (a
 * loop, a path through a file, a link out of the root) the link's own path.
 */
async function brokenTarget(s: Session, root: string, child: FsTarget): Promise<FsTarget> {
  const key = await canonicalPath(s, child.targetKey, 'list').catch(() => undefined)
  return key === undefined || !containsPath(root, key) ? child : { targetKey: FsTargetKey(key), displayPath: child.displayPath }
}
