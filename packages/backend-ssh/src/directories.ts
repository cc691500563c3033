import { posix } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after, hunt, look, probe, settlePlace } from './checks.js'
import type { Attrs, Session } from './connection.js'
import { STATUS, statusOf } from './errors.js'
import { containsPath, kindOf, outsideRoot } from './paths.js'

/** Who makes directories for what, for the checks and their errors. */
export interface DirectorySite {
  readonly root: string
  readonly verb: FsVerb
  readonly path: string
  /** A non-directory on the way is `FS_NOT_DIRECTORY` (`createDirectory`), not a parent that is not one (`FS_NOT_FOUND`). */
  readonly notDirectory?: boolean
  /** Called right before a MKDIR is sent (the operation's commit point, when making a directory is a change it reports). */
  readonly making?: (() => void) | undefined
}

/** The error of a non-directory on the way. */
function blocked(site: DirectorySite, cause?: unknown): FsError {
  return site.notDirectory === true ? FsError.notDirectory(site.verb, site.path, cause) : FsError.throughFile(site.verb, site.path, cause)
}

const isDirectory = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'directory'

/**
 * Makes `dir` (and its missing parents) when missing; returns the first
 * directory it made. Each existing level is checked with the server's
 * realpath in the same round trip. Each one made is checked, in the mkdir's
 * round trip, to be where it should be: `realpath(dir/.)` exists only for a
 * directory and leads to where it is; one made outside through a swapped link
 * is removed and the write refused with `FS_SANDBOX_DENIED`.
 */
export async function ensureDirectory(s: Session, dir: string, site: DirectorySite): Promise<string | undefined> {
  const [real, attrs] = await Promise.allSettled([s.realpath(dir), s.stat(dir)])
  if (real.status === 'fulfilled' && !containsPath(site.root, real.value)) throw outsideRoot(site.verb, site.path, site.root)
  if (attrs.status === 'fulfilled') {
    if (kindOf(attrs.value.mode) !== 'directory') throw blocked(site)
    return undefined
  }
  if (statusOf(attrs.reason) !== STATUS.NO_SUCH_FILE) throw attrs.reason
  if (!containsPath(site.root, dir) || dir === site.root) throw attrs.reason
  const made = await ensureDirectory(s, posix.dirname(dir), site)
  const where = `${dir}/.`
  const before = look(s, dir)
  site.making?.()
  const created = s.mkdir(dir)
  const sighting = probe(s, where, dir, 'lstat')
  try {
    await created
  } catch (err) {
    await Promise.all([before, sighting]).catch(() => undefined)
    // Made meanwhile by someone else is fine; a file in the way is a parent that is not a directory.
    const now = await s.stat(dir).catch(() => undefined)
    if (now === undefined) throw statusOf(err) === STATUS.NO_SUCH_FILE ? blocked(site, err) : err
    if (kindOf(now.mode) !== 'directory') throw blocked(site, err)
    return made
  }
  const settled = await settlePlace(s, site.root, { where, expected: dir, file: dir }, after([await before], await sighting), isDirectory)
  if (settled.verdict === 'yes') return made ?? dir
  if (settled.outside.length === 0) {
    // No path seen leading out: another process moved, removed or replaced it at once. Whatever is
    // at its name now may be theirs: left alone.
    const reason = 'a directory this write made was moved or replaced by another process at once; nothing was written, try again'
    throw FsError.io(site.verb, site.path, reason, { retryable: true })
  }
  // The outside places seen are realpaths of `dir/.`: the directory made there itself.
  const removed = await hunt([dir, ...settled.outside], (p) => s.rmdir(p))
  const left = removed ? 'removed' : 'left (empty) at a place this client could not find'
  const reason = `a directory on the path was swapped for a link while a missing directory was made; the directory made outside was ${left}`
  throw FsError.sandboxDenied(site.verb, site.path, reason)
}

/**
 * Removes the directories a failed write made, deepest first, up to `made`:
 * each only when seen where it was made just before (an empty directory
 * swapped in from outside stays; this narrows the race, it cannot close it).
 */
export async function removeMade(s: Session, dir: string, made: string): Promise<void> {
  for (let d = dir; containsPath(made, d); d = posix.dirname(d)) {
    if ((await s.realpath(`${d}/.`).catch(() => undefined)) !== d) return
    const removed = await s.rmdir(d).then(
      () => true,
      () => false,
    )
    if (!removed || d === made) return
  }
}
