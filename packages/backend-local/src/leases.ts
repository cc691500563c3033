/**
 * Lock entries on the local disk, for the cross-process guards (`LeaseLocks` in core): the lock of
 * the file `dir/name` is the symlink `dir/.seamfs-lock-<24 hex of sha256(name)>` whose text is the
 * lease record, made through `dir` held open and verified, so a directory swapped for a link
 * cannot carry it out of the directory. Listings hide these names and writes refuse them. An entry
 * is never followed; anything but a symlink at the name is not an entry seamfs made: a regular
 * file is garbage (taken over after a lease), a directory, FIFO or socket is reported
 * (`text: undefined`), never opened, never removed.
 */
import { linkSync, lstatSync, lutimesSync, readlinkSync, renameSync, symlinkSync, unlinkSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'
import { FsError, staleReason, type LeaseEntry, type LeaseStore } from '@seamfs/core/backend'
import { type DirAnchor, openAnchor } from './anchor.js'
import { errnoOf } from './errors.js'

const LOCK_PREFIX = '.seamfs-lock-'
/** An entry's name, or (`-x` and 8 hex) the private name a breaker moves an entry to while it checks it. */
const LOCK_NAME = /^\.seamfs-lock-[0-9a-f]{24}(?:-x[0-9a-f]{8})?$/
/** The token of a lock that needs no entry: the target's directory does not exist, so neither does the target. */
export const NO_ENTRY = 'none'

/** True for the name of a lock entry; listings never show these. */
export function isLockName(name: string): boolean {
  return LOCK_NAME.test(name)
}

/** The name of the lock entry of the file named `name` in its directory. */
export function lockNameOf(name: string): string {
  return LOCK_PREFIX + createHash('sha256').update(name).digest('hex').slice(0, 24)
}

/** Errnos of a target directory that is not there (or not a directory): no lock entry can be made, none is needed. */
const NO_DIRECTORY = new Set(['ENOENT', 'ENOTDIR'])

/** `fn` on the target's directory held open and the entry's name; `missing` when there is no such directory. */
function withParent<T, M>(key: string, missing: M, fn: (dir: DirAnchor, name: string) => T): T | M {
  let dir: DirAnchor
  try {
    dir = openAnchor(dirname(key), 'write', key)
  } catch (err) {
    if (NO_DIRECTORY.has(errnoOf(err) ?? '')) return missing
    throw err
  }
  try {
    return fn(dir, lockNameOf(basename(key)))
  } finally {
    dir.close()
  }
}

/** The entry of `name` in `dir`: a symlink's text, read without following it. */
function inspectIn(dir: DirAnchor, name: string): LeaseEntry | undefined {
  const path = dir.at(name)
  const st = lstatSync(path, { throwIfNoEntry: false })
  if (st === undefined) return undefined
  const ageMs = Date.now() - st.mtimeMs
  // A regular file here is not an entry seamfs makes: garbage, judged by its age, removed after a lease.
  if (st.isFile()) return { text: '', token: `file:${st.ino}:${st.mtimeMs}`, ageMs }
  // A directory, a FIFO, a socket: never removed, never opened.
  if (!st.isSymbolicLink()) return { text: undefined, token: `other:${st.ino}`, ageMs }
  let text: string
  try {
    text = readlinkSync(path, 'latin1')
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined
    throw err
  }
  return { text, token: `${st.ino}:${text}`, ageMs }
}

/** The directories of the entries this process holds, kept open by token: a directory renamed meanwhile keeps its entry reachable. */
const heldDirs = new Map<string, { readonly dir: DirAnchor; readonly name: string }>()

/**
 * Removes the entry `name` of `dir` only when it is the one of `token`, atomically against other
 * breakers: the entry is first moved to a private name (a rename moves exactly one entry), then
 * checked there; one that is not the one judged (another breaker's fresh entry) is put back with
 * `link(2)`, which never replaces. If a new entry took the name meanwhile, the moved one's holder
 * has lost its lock, which its check before a commit (`stillHeld`) tells it.
 */
function removeIf(dir: DirAnchor, name: string, token: string): void {
  const aside = `${name}-x${randomBytes(4).toString('hex')}`
  try {
    renameSync(dir.at(name), dir.at(aside))
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return
    throw err
  }
  try {
    if (inspectIn(dir, aside)?.token === token) return
    try {
      linkSync(dir.at(aside), dir.at(name))
    } catch {
      // A new entry took the name: the moved one's holder finds out before it commits.
    }
  } finally {
    try {
      unlinkSync(dir.at(aside))
    } catch {
      // Gone meanwhile: nothing is left under the private name.
    }
  }
}

/**
 * The lock entries of one local disk. An entry is a symlink whose text is the lease record: made
 * whole in one syscall that fails when the name exists (`symlink(2)`), read whole in one
 * (`readlink(2)`), never followed, and kept in the inode (a record is under 60 bytes), so taking
 * a lock writes no data block for the next fsync. A held entry's directory stays open until its
 * release. Every call is synchronous.
 */
export const localLeaseStore: LeaseStore & { stillHeld(key: string, token: string): boolean } = {
  create(key, text) {
    let dir: DirAnchor
    try {
      dir = openAnchor(dirname(key), 'write', key)
    } catch (err) {
      if (NO_DIRECTORY.has(errnoOf(err) ?? '')) return NO_ENTRY
      throw err
    }
    const name = lockNameOf(basename(key))
    try {
      symlinkSync(text, dir.at(name))
      const st = lstatSync(dir.at(name), { throwIfNoEntry: false })
      if (st === undefined) throw FsError.io('write', key, 'a lock entry vanished as it was made; retry', { retryable: true })
      const token = `${st.ino}:${text}`
      heldDirs.set(token, { dir, name })
      return token
    } catch (err) {
      dir.close()
      if (errnoOf(err) === 'EEXIST') return undefined
      throw err
    }
  },
  inspect(key) {
    return withParent(key, undefined, inspectIn)
  },
  remove(key, token) {
    if (token === NO_ENTRY) return
    const held = heldDirs.get(token)
    if (held !== undefined) {
      heldDirs.delete(token)
      try {
        removeIf(held.dir, held.name, token)
      } finally {
        held.dir.close()
      }
      return
    }
    withParent(key, undefined, (dir, name) => removeIf(dir, name, token))
  },
  renew(key, token) {
    if (token === NO_ENTRY) return
    const held = heldDirs.get(token)
    const renewIn = (dir: DirAnchor, name: string): void => {
      if (inspectIn(dir, name)?.token !== token) throw FsError.io('write', key, 'the lock entry was taken over', { retryable: true })
      const now = new Date()
      lutimesSync(dir.at(name), now, now)
    }
    if (held !== undefined) renewIn(held.dir, held.name)
    else if (withParent(key, false, (dir, name) => (renewIn(dir, name), true)) === false) {
      throw FsError.io('write', key, 'the lock entry is gone', { retryable: true })
    }
  },
  stillHeld(key, token) {
    if (token === NO_ENTRY) return true
    const held = heldDirs.get(token)
    if (held === undefined) return false
    return inspectIn(held.dir, held.name)?.token === token
  },
  describe(key) {
    return JSON.stringify(join(dirname(key), lockNameOf(basename(key))))
  },
}

/**
 * Removes the lock entry `name` of `dir` when it is stale (its holder gone or its lease run out):
 * what a killed holder left must not keep its directory from being removed. A live one stays.
 */
export function clearIfStale(dir: DirAnchor, name: string): void {
  const entry = inspectIn(dir, name)
  if (entry === undefined || entry.text === undefined || staleReason(entry) === undefined) return
  try {
    // A private name a breaker died with is nobody's to take: it simply goes.
    if (name.includes('-x')) unlinkSync(dir.at(name))
    else removeIf(dir, name, entry.token)
  } catch {
    // Not ours to remove: it stays for the next sweep.
  }
}
