import { checkGuard, FsError, type FsVersion, type FsWriteIntent } from '@seamfs/core/backend'
import { dropOpening, sendOpen, type Opening } from './checked-reads.js'
import type { Attrs, Session } from './connection.js'
import type { PublishPlan } from './publish.js'

/** What the plans of a write or an edit need of the filesystem, for one target. */
export interface PlanSite {
  readonly s: Session
  readonly key: string
  readonly verb: 'write' | 'edit'
  readonly path: string
  /** The size of the file when it was just seen as a regular file (its OPEN may then go at once). */
  readonly hinted: number | undefined
  readonly newFileMode: number
  /** The file's attrs (links followed), its path fenced to the root in the same round trip; undefined when absent. */
  current(): Promise<Attrs | undefined>
  /** Refuses what is not a regular file. */
  assertFile(attrs: Attrs): void
  /** Reads the file whole (through `opening` when sent) with its content-hash version; undefined when it vanished. */
  read(attrs: Attrs, opening: Opening | undefined, maxBytes?: number): Promise<{ bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined>
  /** The mtime of the file when it was just seen as a regular file. */
  readonly hintedMtime: number | undefined
  /** Whether a hash of a file of this mtime, read from now on, is a settled one (the version cache keeps it). */
  settles(mtime: number): boolean
  /** The settled hash of the file with these attrs, if the version cache has one. */
  settled(attrs: Attrs): FsVersion | undefined
}

/** A plan for the publisher, with what the caller learns from it and how it lets go of an OPEN sent early. */
export interface Plan<T> extends PublishPlan {
  /** What the plan found (once the publication is done). */
  readonly found: () => T
  /** Closes the OPEN sent early when nothing read it (idempotent). */
  readonly dispose: () => void
}

/** An OPEN of the current file sent early, taken once: by the read, or closed (handles are reused: never closed twice). */
export function early(site: PlanSite, wanted: boolean): { take: () => Opening | undefined; dispose: () => void } {
  let opening = wanted ? sendOpen(site.s, site.key) : undefined
  const take = (): Opening | undefined => {
    const sent = opening
    opening = undefined
    return sent
  }
  return { take, dispose: () => dropOpening(site.s, take()) }
}

/**
 * The plan of a write that replaces (not `createIfAbsent`): the current file is stat-ed with the
 * stage, read for the guard (its hash is the version) or the diff basis `before` (when it is
 * not larger than `beforeMaxBytes`), and a write-protected file refused.
 */
export function planWrite(
  site: PlanSite,
  expected: FsWriteIntent | undefined,
  beforeMaxBytes: number,
): Plan<{ current: Attrs | undefined; read: { bytes: Buffer; version: FsVersion } | undefined }> {
  const { verb, path } = site
  const wanted = (size: number): boolean => expected !== undefined || (beforeMaxBytes > 0 && size <= beforeMaxBytes)
  const opening = early(site, site.hinted !== undefined && wanted(site.hinted))
  let current: Attrs | undefined
  let read: { bytes: Buffer; version: FsVersion } | undefined
  const ready = site.current().then((attrs) => {
    current = attrs
    if (current !== undefined) site.assertFile(current)
    // Unguarded, a write-protected file is refused before its content is read for the diff basis.
    if (current !== undefined && expected === undefined) assertWritable(current, verb, path)
    return current === undefined ? site.newFileMode : current.mode & 0o777
  })
  ready.catch(opening.dispose)
  const commit = async (): Promise<undefined> => {
    const sent = opening.take()
    // A guarded write reads the file whatever its size.
    if (current !== undefined && wanted(current.size)) read = await site.read(current, sent)
    else dropOpening(site.s, sent)
    checkGuard(verb, path, expected, read?.version)
    if (current !== undefined) assertWritable(current, verb, path)
    return undefined
  }
  return { ready, commit, found: () => ({ current, read }), dispose: opening.dispose }
}

/**
 * The plan of an edit: the file must exist (else stale `gone`) and be a regular file not above
 * `maxBytes` (refused before a byte is read: the version is the content's hash, so the guard can
 * only be checked on the bytes); its content is read, the guard checked, and `transform` applied.
 */
export function planEdit(
  site: PlanSite,
  expected: { readonly version: FsVersion } | undefined,
  maxBytes: number,
  transform: (bytes: Uint8Array) => Uint8Array,
): Plan<undefined> {
  const { verb, path } = site
  const opening = early(site, site.hinted !== undefined && site.hinted <= maxBytes)
  let current: Attrs | undefined
  const ready = site.current().then((attrs) => {
    if (attrs === undefined) throw FsError.stale(verb, path, 'gone')
    site.assertFile(attrs)
    if (attrs.size > maxBytes) throw FsError.tooLarge(verb, path, attrs.size, maxBytes)
    current = attrs
    return attrs.mode & 0o777
  })
  ready.catch(opening.dispose)
  const commit = async (): Promise<Uint8Array> => {
    const attrs = current as Attrs
    const read = await site.read(attrs, opening.take(), maxBytes)
    if (read === undefined) throw FsError.stale(verb, path, 'gone')
    checkGuard(verb, path, expected, read.version)
    assertWritable(attrs, verb, path)
    return transform(read.bytes)
  }
  return { ready, commit, found: () => undefined, dispose: opening.dispose }
}

/**
 * Refuses to replace a write-protected file: one whose mode grants write to no one (`0444`), as an
 * editor would. The server's rename ignores the file's own mode (only the directory's counts), so
 * without this a write or edit would silently replace it. (Whether this user may write a file
 * whose mode grants write to others only is not asked: SFTP does not say who the user is.)
 */
export function assertWritable(attrs: Attrs, verb: 'write' | 'edit', path: string): void {
  const mode = attrs.mode & 0o7777
  if ((mode & 0o222) === 0) throw FsError.writeProtected(verb, path, mode)
}
