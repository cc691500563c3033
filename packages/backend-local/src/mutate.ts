/**
 * `remove` and `createDirectory` on the local disk, bound to verified directories like every write
 * (see `anchor.ts`): the parent of the target is opened verified at its canonical path and the
 * target is named through its descriptor, so a directory swapped for a link meanwhile cannot carry
 * a remove elsewhere. A recursive remove enters each directory through its parent's descriptor
 * without following a link, one level at a time; links inside are unlinked, never followed.
 */
import { type BigIntStats, type Stats, fsync, lstatSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs'
import { basename, dirname, sep } from 'node:path'
import {
  checkGuard,
  FsError,
  isFsError,
  throwIfAborted,
  type FsRemoveOutcome,
  type FsTarget,
  type FsVersion,
  type LeaseHold,
  type RemoveRequest,
} from '@seamfs/core/backend'
import { type DirAnchor, ensureAnchor, openAnchor, pathChanged } from './anchor.js'
import { errnoOf } from './errors.js'
import type { LocalHooks } from './options.js'
import { clearIfStale, isLockName } from './leases.js'
import { clearStages, isStagingName } from './publish.js'
import { typeOf, versionOf } from './stats.js'

type MutationVerb = 'remove' | 'rename' | 'create directory'
type Guard = { readonly version: FsVersion } | undefined

/** What a remove or rename runs under. */
export interface Held {
  /** The hold of the target's lock entry (the caller's): checked right before the commit. */
  readonly hold: LeaseHold
  /** The filesystem's test hooks (`beforeMutate` runs before the commit). */
  readonly hooks: LocalHooks | undefined
}

/** Errnos of a parent directory that is not there (or no longer a directory). */
const GONE = new Set(['ENOENT', 'ENOTDIR'])
/** What `rmdir(2)` says of a directory with entries (POSIX allows either). */
export const NOT_EMPTY = new Set(['ENOTEMPTY', 'EEXIST'])

/** The lstat of `name` in `dir` (a link is not followed); undefined when it is not there. */
export function lstatIn(dir: DirAnchor, name: string): BigIntStats | undefined {
  return lstatSync(dir.at(name), { bigint: true, throwIfNoEntry: false })
}

/** Refuses a path through a staging directory's or lock entry's name: sweeps remove those, listings hide them. */
export function assertUnreserved(key: string, verb: MutationVerb, path: string): void {
  const reserved = key.split(sep).find((name) => isStagingName(name) || isLockName(name))
  if (reserved !== undefined) throw FsError.unsupported(verb, path, `the name "${reserved}" is reserved for staging directories and lock entries`)
}

/** Throws what a missing source is: `FS_NOT_FOUND`, or `FS_STALE_VERSION` (gone) under a guard. */
export function absent(verb: 'remove' | 'rename', path: string, expected: Guard, cause?: unknown): never {
  checkGuard(verb, path, expected, undefined)
  throw FsError.notFound(verb, path, cause)
}

/** The parent directory of canonical `key`, opened verified; a missing parent means a missing source. */
export function openParent(key: string, verb: 'remove' | 'rename', path: string, expected: Guard): DirAnchor {
  try {
    return openAnchor(dirname(key), verb, path)
  } catch (err) {
    if (GONE.has(errnoOf(err) ?? '')) absent(verb, path, expected, err)
    throw err
  }
}

/** Enters the directory `name` of `dir` without following a link; undefined when it is gone. */
function enter(dir: DirAnchor, name: string, verb: MutationVerb, path: string): DirAnchor | undefined {
  try {
    return dir.child(name)
  } catch (err) {
    if (['ELOOP', 'ENOTDIR'].includes(errnoOf(err) ?? '')) throw pathChanged(verb, path, err)
    throw err
  }
}

/** Flushes `dir`'s directory entry to disk; best effort (some filesystems refuse to fsync a directory). */
export function syncQuietly(dir: DirAnchor): Promise<void> {
  if (dir.fd < 0) return Promise.resolve()
  return new Promise((resolve) => fsync(dir.fd, () => resolve()))
}

/**
 * Removes the empty directory `name` of `parent`. Idle staging directories (kept for the next
 * write, hidden from listings) and dead writers' residue do not count as entries: they are cleared
 * and the removal tried once more. Anything else inside is `FsError.notEmpty`.
 */
function removeEmptyDirectory(parent: DirAnchor, name: string, verb: MutationVerb, path: string): void {
  try {
    rmdirSync(parent.at(name))
    return
  } catch (err) {
    if (!NOT_EMPTY.has(errnoOf(err) ?? '')) throw err
  }
  const dir = enter(parent, name, verb, path)
  if (dir === undefined) return
  try {
    clearStages(dir)
    for (const entry of readdirSync(dir.at(''))) if (isLockName(entry)) clearIfStale(dir, entry)
  } finally {
    dir.close()
  }
  try {
    rmdirSync(parent.at(name))
  } catch (err) {
    if (NOT_EMPTY.has(errnoOf(err) ?? '')) throw FsError.notEmpty(verb, path, err)
    throw err
  }
}

/** Counts the entries below `dir` into `count`, stopping once it passes `limit`. Links count, and are never entered. */
function countBelow(dir: DirAnchor, limit: number, count: { n: number }, path: string): void {
  for (const entry of readdirSync(dir.at(''), { withFileTypes: true })) {
    if ((entry.isDirectory() && isStagingName(entry.name)) || (!entry.isDirectory() && isLockName(entry.name))) continue
    if (++count.n > limit) return
    if (!entry.isDirectory()) continue
    const child = enter(dir, entry.name, 'remove', path)
    if (child === undefined) continue
    try {
      countBelow(child, limit, count, path)
    } finally {
      child.close()
    }
    if (count.n > limit) return
  }
}

/** Removes everything below `dir`, depth first, each entry through its own directory's descriptor. Returns how many went. */
function removeBelow(dir: DirAnchor, path: string): number {
  clearStages(dir)
  let removed = 0
  for (const name of readdirSync(dir.at(''))) {
    const st = lstatIn(dir, name)
    // Gone meanwhile, or a staging directory or lock entry a writer is using now (its parent's rmdir
    // then says not empty); a dead writer's lock entry goes.
    if (st !== undefined && !st.isDirectory() && isLockName(name)) {
      clearIfStale(dir, name)
      continue
    }
    if (st === undefined || (st.isDirectory() && isStagingName(name))) continue
    try {
      if (st.isDirectory()) {
        const child = enter(dir, name, 'remove', path)
        if (child === undefined) continue
        try {
          removed += removeBelow(child, path)
        } finally {
          child.close()
        }
        removeEmptyDirectory(dir, name, 'remove', path)
      } else {
        unlinkSync(dir.at(name))
      }
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') continue
      throw err
    }
    removed++
  }
  return removed
}

/**
 * A recursive remove of the directory `target` (in `parent`): counted first, the directory itself
 * included, and refused above the bound (`details.entries` is where the count stopped: bound + 1,
 * the walk goes no further), then removed depth first. Returns how many entries went.
 */
async function removeTree(parent: DirAnchor, target: FsTarget, request: RemoveRequest, { hold, hooks }: Held): Promise<number> {
  const { maxEntries: limit, signal } = request
  const { targetKey: key, displayPath: path } = target
  const name = basename(key)
  const dir = enter(parent, name, 'remove', path)
  if (dir === undefined) throw FsError.notFound('remove', path)
  let removed: number
  try {
    const count = { n: 1 }
    countBelow(dir, limit, count, path)
    if (count.n > limit) {
      throw FsError.tooManyEntries('remove', path, count.n, limit)
    }
    if (hooks?.beforeMutate !== undefined) await hooks.beforeMutate(key)
    throwIfAborted(signal, 'remove')
    hold.assertHeld('remove', path)
    removed = removeBelow(dir, path)
  } finally {
    dir.close()
  }
  removeEmptyDirectory(parent, name, 'remove', path)
  return removed + 1
}

/**
 * `remove` of `target` (its key canonical; the caller holds its lock): the entry is looked at and removed
 * through its parent held open, so the guard and the type checked are those of the entry removed
 * (against every seamfs writer of this disk: the caller holds the key's lock entry; a program that
 * is not seamfs can still race between the check and the unlink).
 */
export async function removeEntry(target: FsTarget, request: RemoveRequest, held: Held): Promise<FsRemoveOutcome> {
  const { expected, recursive, signal } = request
  const { targetKey: key, displayPath: path } = target
  const { hold, hooks } = held
  assertUnreserved(key, 'remove', path)
  const parent = openParent(key, 'remove', path, expected)
  try {
    const name = basename(key)
    const st = lstatIn(parent, name)
    if (st === undefined) absent('remove', path, expected)
    // A canonical key never names a link: one there now was put there since `resolve`.
    if (st.isSymbolicLink()) throw pathChanged('remove', path)
    const type = typeOf(st)
    if (type === 'other') throw FsError.notRegularFile('remove', path)
    // A directory's version too: a caller that saw a directory never removes a file that took its place.
    checkGuard('remove', path, expected, versionOf(st))
    let entries = 1
    if (type === 'file') {
      if (hooks?.beforeMutate !== undefined) await hooks.beforeMutate(key)
      throwIfAborted(signal, 'remove')
      hold.assertHeld('remove', path)
      try {
        unlinkSync(parent.at(name))
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') absent('remove', path, expected, err)
        throw err
      }
    } else if (recursive) {
      entries = await removeTree(parent, target, request, held)
    } else {
      if (hooks?.beforeMutate !== undefined) await hooks.beforeMutate(key)
      throwIfAborted(signal, 'remove')
      hold.assertHeld('remove', path)
      removeEmptyDirectory(parent, name, 'remove', path)
    }
    await syncQuietly(parent)
    return { type, entries }
  } finally {
    parent.close()
  }
}

/**
 * `createDirectory` of canonical `key`, like `mkdir -p`: each missing level is made and entered
 * through its parent's descriptor (`ensureAnchor`). True when this call made `key` itself; an
 * existing directory is false; a non-directory at the path or on the way is `FsError.notDirectory`.
 */
export function makeDirectoryAt(key: string, path: string, signal: AbortSignal | undefined): boolean {
  const verb = 'create directory'
  assertUnreserved(key, verb, path)
  let st: Stats | undefined
  try {
    st = statSync(key, { throwIfNoEntry: false })
  } catch (err) {
    if (errnoOf(err) === 'ENOTDIR') throw FsError.notDirectory(verb, path, err)
    throw err
  }
  if (st?.isDirectory() === true) return false
  if (st !== undefined) throw FsError.notDirectory(verb, path)
  throwIfAborted(signal, verb)
  let made: readonly string[]
  try {
    const anchored = ensureAnchor(key, verb, path)
    anchored.anchor.close()
    made = anchored.made
  } catch (err) {
    // ensureAnchor's only FS_NOT_FOUND: a file on the way (or one that took a missing level's place).
    if (isFsError(err, 'FS_NOT_FOUND') || errnoOf(err) === 'ENOTDIR') throw FsError.notDirectory(verb, path, err)
    throw err
  }
  return made[made.length - 1] === key
}
