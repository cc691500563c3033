/**
 * I/O bound to verified directories, not to path strings. A target's key is its canonical path
 * (every directory on it real, no link); a process that swaps one of those directories for a
 * symlink between `resolve` and the I/O would carry a path-string operation elsewhere. So:
 *
 * - a file or directory is opened by its canonical path and the descriptor is then asked, through
 *   the kernel (`/proc/self/fd/N`), where it really is: anything but the canonical path means a
 *   link was swapped in, and the operation fails before a byte moves ({@link openVerified});
 * - a mutation holds its parent directory open that way ({@link DirAnchor}) and names everything
 *   below it through the descriptor (`/proc/self/fd/N/name`): the kernel looks `name` up in that
 *   very directory, wherever its path points by then; directories it makes are made and opened the
 *   same way, one level at a time, never following a link.
 *
 * This needs descriptor paths (Linux's procfs). Elsewhere ({@link DESCRIPTOR_PATHS} false) the
 * same functions work by path string: the sandbox's check then holds only against a static tree.
 */
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readlinkSync, realpathSync, rmdirSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { errnoOf } from './errors.js'

/** Whether an open descriptor can be named by a path (`/proc/self/fd/N`): Linux with procfs. */
export const DESCRIPTOR_PATHS: boolean = process.platform === 'linux' && existsSync('/proc/self/fd')

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY
/** A directory made by a write is entered without following a link that may have replaced it. */
const CHILD_DIR_FLAGS = DIR_FLAGS | constants.O_NOFOLLOW

/** The path naming descriptor `fd` itself. */
export const fdPath = (fd: number): string => `/proc/self/fd/${fd}`

/** The failure of an operation whose path stopped naming what `resolve` named (a link was swapped in). */
export function pathChanged(verb: FsVerb, path: string, cause?: unknown): FsError {
  return FsError.io(verb, path, 'a directory on its path was replaced while it was being opened (by a link?); resolve it again and retry', {
    retryable: true,
    cause,
  })
}

/**
 * Opens the canonical path `key` with `flags` and checks that the descriptor is that path now.
 * A mismatch closes it. When every directory on the way is still real (the path leads where it
 * should), the mismatch was an ordinary race — another process renamed or removed the file between
 * the open and the check — and the open is tried again (a file now gone fails as a missing one).
 * Otherwise a directory on the way was swapped for a link: {@link pathChanged}. Open errors are
 * thrown as they are, for the error table.
 */
export function openVerified(key: string, flags: number, verb: FsVerb, displayPath: string): number {
  for (let attempt = 0; ; attempt++) {
    const fd = openSync(key, flags)
    if (!DESCRIPTOR_PATHS) return fd
    let real: string
    try {
      real = readlinkSync(fdPath(fd))
    } catch (err) {
      closeSync(fd)
      throw err
    }
    if (real === key) return fd
    closeSync(fd)
    if (!directoriesReal(dirname(key))) throw pathChanged(verb, displayPath)
    // An ordinary race every time: no link, only another process moving things faster than we open them.
    if (attempt >= 15)
      throw FsError.io(verb, displayPath, 'another process kept moving it (or a directory on its path) while it was opened; retry', { retryable: true })
  }
}

/**
 * Whether the canonical directory path `dir` still leads where it says: every level a real
 * directory, or a level gone (renamed or removed by another process: the next open says so).
 */
function directoriesReal(dir: string): boolean {
  try {
    return realpathSync.native(dir) === dir
  } catch (err) {
    return ['ENOENT', 'ENOTDIR'].includes(errnoOf(err) ?? '')
  }
}

/** A directory held open: children are named through its descriptor, so they are looked up in it. */
export class DirAnchor {
  readonly #fd: number | undefined

  /** `path`: the canonical path it was verified at; `fd`: its descriptor (none without descriptor paths). */
  constructor(
    readonly path: string,
    fd: number | undefined,
  ) {
    this.#fd = fd
  }

  /** The descriptor, for fsync and fstat; -1 without descriptor paths. */
  get fd(): number {
    return this.#fd ?? -1
  }

  /** The path of `name` in this very directory (`''`: the directory itself). */
  at(name: string): string {
    if (this.#fd === undefined) return name === '' ? this.path : join(this.path, name)
    return name === '' ? fdPath(this.#fd) : `${fdPath(this.#fd)}/${name}`
  }

  /** `dev:ino` of the directory: who it is, whatever path leads to it now. */
  identity(): string {
    const st = this.#fd === undefined ? statSync(this.path, { bigint: true }) : fstatSync(this.#fd, { bigint: true })
    return `${st.dev}:${st.ino}`
  }

  /** Opens the child directory `name` without following a link; undefined when it is not there. */
  child(name: string): DirAnchor | undefined {
    try {
      return new DirAnchor(join(this.path, name), openSync(this.at(name), this.#fd === undefined ? DIR_FLAGS : CHILD_DIR_FLAGS))
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined
      throw err
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
  }
}

/** Opens the existing directory at canonical path `dir`, verified. */
export function openAnchor(dir: string, verb: FsVerb, displayPath: string): DirAnchor {
  const fd = openVerified(dir, DIR_FLAGS, verb, displayPath)
  return new DirAnchor(dir, DESCRIPTOR_PATHS ? fd : (closeSync(fd), undefined))
}

/** What {@link ensureAnchor} gives: the directory held open, and the directories it made (outermost first). */
export interface Anchored {
  readonly anchor: DirAnchor
  readonly made: readonly string[]
}

/**
 * The directory `dir` (canonical) held open, made first when missing, like `mkdir -p`: the deepest
 * existing ancestor is opened verified, then each missing level is made and entered through its
 * parent's descriptor, never through a link. A file on the way is `FS_NOT_FOUND` (through a file).
 */
export function ensureAnchor(dir: string, verb: FsVerb, displayPath: string): Anchored {
  const missing: string[] = []
  let top = dir
  for (;;) {
    const st = statSync(top, { throwIfNoEntry: false })
    if (st?.isDirectory() === true) break
    if (st !== undefined) throw FsError.throughFile(verb, displayPath)
    const parent = dirname(top)
    if (parent === top) break
    missing.unshift(basename(top))
    top = parent
  }
  let anchor = openAnchor(top, verb, displayPath)
  const made: string[] = []
  try {
    for (const name of missing) {
      try {
        mkdirSync(anchor.at(name), 0o777)
        made.push(join(anchor.path, name))
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err
      }
      let next: DirAnchor | undefined
      try {
        next = anchor.child(name)
      } catch (err) {
        const errno = errnoOf(err)
        if (errno === 'ENOTDIR') throw FsError.throughFile(verb, displayPath, err)
        if (errno === 'ELOOP') throw pathChanged(verb, displayPath, err)
        throw err
      }
      if (next === undefined) throw pathChanged(verb, displayPath)
      anchor.close()
      anchor = next
    }
  } catch (err) {
    anchor.close()
    removeMadeDirectories(made)
    throw err
  }
  return { anchor, made }
}

/**
 * Undoes `mkdir -p` of a failed write: removes the directories it made, deepest first, while they
 * are empty, each through its parent opened verified (a parent that moved is left alone). A
 * directory someone else has put something in meanwhile stays.
 */
export function removeMadeDirectories(made: readonly string[]): void {
  for (const dir of [...made].reverse()) {
    let parent: DirAnchor
    try {
      parent = openAnchor(dirname(dir), 'write', dir)
    } catch {
      return
    }
    try {
      rmdirSync(parent.at(basename(dir)))
    } catch {
      return
    } finally {
      parent.close()
    }
  }
}
