import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve as resolvePath, sep } from 'node:path'
import { FsError } from '@seamfs/core/backend'
import { errnoOf } from './errors.js'

/** Linux's SYMLOOP_MAX: how many dangling links `canonicalPath` follows. */
const MAX_LINK_HOPS = 40

/** The absolute, lexically normalized form of `path` against `cwd`. */
export function absolutePath(path: string, cwd: string): string {
  return resolvePath(cwd, path)
}

/**
 * The canonical identity of `abs`: its realpath when it exists; for a missing
 * path, the realpath of the nearest existing ancestor plus the missing suffix
 * (stable before and after creation). A dangling symlink is followed to the
 * path it names, so writing through it creates its target and keeps the link.
 * Other errno errors (ENOTDIR, ELOOP…) are thrown as they are, for the error table.
 */
export function canonicalPath(abs: string, hops = 0): string {
  try {
    return realpathSync.native(abs)
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err
  }
  const parent = dirname(abs)
  if (parent === abs) return abs
  // The link text is relative to the directory the link really is in, as the kernel reads it,
  // not to the path it was reached through (which may run through a symlinked directory).
  const dir = canonicalPath(parent, hops)
  const here = join(dir, basename(abs))
  const link = lstatSync(here, { throwIfNoEntry: false })
  if (link?.isSymbolicLink() === true) {
    if (hops >= MAX_LINK_HOPS) throw FsError.linkLoop('resolve', abs)
    return canonicalPath(resolvePath(dir, readlinkSync(here)), hops + 1)
  }
  return here
}

/** True when `child` is `parent` or below it (keys are canonical absolute paths). */
export function containsPath(parent: string, child: string): boolean {
  const rel = relative(parent, child)
  if (rel === '') return true
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}
