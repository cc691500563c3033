/**
 * Lock entries on the local disk, for the cross-process guards (`LeaseLocks` in core): the lock of
 * the file `dir/name` is the file `dir/.seamfs-lock-<24 hex of sha256(name)>`, made with
 * `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0600) through `dir` held open and verified, so neither a
 * planted link nor a directory swapped for one carries it out of the directory. Listings hide these
 * names and writes refuse them. An entry is never followed: a link, a directory or a FIFO planted
 * at the name is reported (`text: undefined`), never opened, never removed.
 */
import { closeSync, constants, fstatSync, lstatSync, lutimesSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { basename, dirname, join } from 'node:path'
import { staleReason, type LeaseEntry, type LeaseStore } from '@seamfs/core/backend'
import { type DirAnchor, openAnchor } from './anchor.js'
import { errnoOf } from './errors.js'

const LOCK_PREFIX = '.seamfs-lock-'
const LOCK_NAME = /^\.seamfs-lock-[0-9a-f]{24}$/
/** An entry longer than this is not a record; only this much is read. */
const MAX_ENTRY_BYTES = 1024
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

/** The entry of `name` in `dir`, read without following anything. */
function inspectIn(dir: DirAnchor, name: string): LeaseEntry | undefined {
  const path = dir.at(name)
  const st = lstatSync(path, { throwIfNoEntry: false })
  if (st === undefined) return undefined
  const ageMs = Date.now() - st.mtimeMs
  if (!st.isFile()) return { text: undefined, token: `other:${st.ino}`, ageMs }
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined
    if (errnoOf(err) === 'ELOOP') return { text: undefined, token: `other:${st.ino}`, ageMs }
    throw err
  }
  try {
    const now = fstatSync(fd)
    if (!now.isFile()) return { text: undefined, token: `other:${now.ino}`, ageMs }
    const buffer = Buffer.alloc(MAX_ENTRY_BYTES)
    const n = readSync(fd, buffer, 0, MAX_ENTRY_BYTES, 0)
    const text = buffer.subarray(0, n).toString('latin1')
    return { text, token: `${now.ino}:${text}`, ageMs: Date.now() - now.mtimeMs }
  } finally {
    closeSync(fd)
  }
}

/** The lock entries of one local disk. Every call is synchronous: a few syscalls through the directory held open. */
export const localLeaseStore: LeaseStore = {
  create(key, text) {
    return withParent(key, NO_ENTRY, (dir, name) => {
      let fd: number
      try {
        fd = openSync(dir.at(name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
      } catch (err) {
        if (errnoOf(err) === 'EEXIST') return undefined
        throw err
      }
      try {
        writeSync(fd, text)
        return `${fstatSync(fd).ino}:${text}`
      } finally {
        closeSync(fd)
      }
    })
  },
  inspect(key) {
    return withParent(key, undefined, inspectIn)
  },
  remove(key, token) {
    if (token === NO_ENTRY) return
    withParent(key, undefined, (dir, name) => {
      if (inspectIn(dir, name)?.token !== token) return
      try {
        unlinkSync(dir.at(name))
      } catch (err) {
        if (errnoOf(err) !== 'ENOENT') throw err
      }
    })
  },
  renew(key, token) {
    if (token === NO_ENTRY) return
    withParent(key, undefined, (dir, name) => {
      if (inspectIn(dir, name)?.token !== token) return
      const now = new Date()
      lutimesSync(dir.at(name), now, now)
    })
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
  if (inspectIn(dir, name)?.token !== entry.token) return
  try {
    unlinkSync(dir.at(name))
  } catch {
    // Gone meanwhile, or not ours to remove: it stays for the next sweep.
  }
}
