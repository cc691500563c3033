import { closeSync, lstatSync, openSync, readlinkSync, realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve as resolvePath, sep } from 'node:path'
import { FsError } from '@seamfs/core/backend'
import { DESCRIPTOR_PATHS, fdPath } from './anchor.js'
import { errnoOf } from './errors.js'

/** Linux's SYMLOOP_MAX: how many dangling links `canonicalPath` follows. */
const MAX_LINK_HOPS = 40

/** Linux's `O_PATH` (one value on every architecture Node runs on; `fs.constants` lacks it): a descriptor that only names. */
export const O_PATH = 0o10000000

/** Errnos of a descriptor that could not be had, where realpath(3) needs none: it answers instead. */
export const NO_DESCRIPTOR = new Set(['EMFILE', 'ENFILE'])

/**
 * The realpath of an existing `abs`, in one lookup: the kernel walks the path once while opening it
 * `O_PATH` (nothing is opened for I/O: a FIFO, a device, an unreadable file alike) and names what it
 * reached (`/proc/self/fd/N`, as `openVerified` reads it). realpath(3) reads every ancestor as a
 * possible link, each a lookup from `/` again: its cost grows with the square of the depth (28 ms a
 * call at 800 levels, against 0.1 ms), and the sandbox resolves every path it checks. Without
 * descriptor paths, or where the name read is not a path (a file removed meanwhile names itself
 * `… (deleted)`), realpath(3) answers. Errors are the lookup's own (ENOENT, ENOTDIR, ELOOP, EACCES…).
 */
export function realPath(abs: string): string {
  if (!DESCRIPTOR_PATHS) return realpathSync.native(abs)
  let fd: number
  try {
    fd = openSync(abs, O_PATH)
  } catch (err) {
    if (NO_DESCRIPTOR.has(errnoOf(err) ?? '')) return realpathSync.native(abs)
    throw err
  }
  try {
    const named = readlinkSync(fdPath(fd))
    return named.startsWith('/') && !named.endsWith(' (deleted)') ? named : realpathSync.native(abs)
  } finally {
    closeSync(fd)
  }
}

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
    return realPath(abs)
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

/** A path with a `.` or `..` segment, or an empty one: not in canonical form, so compared the long way. */
const NOT_CANONICAL = /\/\.{0,2}(?:\/|$)/

/**
 * True when `child` is `parent` or below it (keys are canonical absolute paths). Canonical keys are
 * compared by prefix at a segment boundary; anything else (a key a caller built by hand, with `..`
 * in it) the long way, normalized.
 */
export function containsPath(parent: string, child: string): boolean {
  if (sep === '/' && child.startsWith(parent) && !NOT_CANONICAL.test(child) && !NOT_CANONICAL.test(parent)) {
    if (child.length === parent.length || parent.endsWith(sep) || child[parent.length] === sep) return true
  }
  const rel = relative(parent, child)
  if (rel === '') return true
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}
