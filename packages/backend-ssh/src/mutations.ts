import { posix } from 'node:path'
import {
  checkGuard,
  FsError,
  throwIfAborted,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsVerb,
  type FsVersion,
  type LeaseHold,
  type RemoveRequest,
  type RenameRequest,
} from '@seamfs/core/backend'
import type { ServerClock } from './clock.js'
import type { Attrs, Session } from './connection.js'
import { ensureDirectory, removeMade } from './directories.js'
import { STATUS, statusOf } from './errors.js'
import { isReservedName } from './names.js'
import { kindOf, type Kind } from './paths.js'
import { dropStage, makeStage, nameOf, stageOf, stageOrError, through, type Stage } from './stages.js'
import type { StageKeeper, Sweeper } from './sweep.js'
import { entriesOf } from './entries.js'
import { moveEntry, removeEntry, removeTree, surveyTree, type TreeSite } from './tree.js'
import { metadataVersion, type VersionCache } from './versions.js'

/** What a request of a removal or move is for: the verb and path its errors name, and the caller's signal. */
export interface MutationOp {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
}

/** What the removals and moves need of the filesystem: its session, root, versions and locks. */
export interface MutationContext {
  readonly s: Session
  readonly root: string
  readonly versions: VersionCache
  /** The lstat of `key`, undefined when absent, with `realpath(key)` fenced to the root in the same round trip. */
  current(key: string, verb: FsVerb, path: string): Promise<Attrs | undefined>
  /** The content-hash version of the file `key` (cached or read), undefined when it vanished. */
  version(key: string, attrs: Attrs, op: MutationOp): Promise<FsVersion | undefined>
  /** Takes over a stage that could not be removed (the next operation's sweep removes it). */
  orphan(stage: string): void
  readonly keeper: StageKeeper
  readonly clock: ServerClock
  readonly sweeper: Sweeper
  /**
   * Runs `fn` holding the locks of `keys` (the ones writes and edits take): this process's
   * per-target mutex, then the cross-process lease (leases.ts); `fn` calls `hold.assertHeld`
   * right before it commits.
   */
  locked<T>(keys: readonly string[], op: MutationOp, fn: (hold: LeaseHold) => Promise<T>): Promise<T>
  /** Sends the removal of the lock entries of `keys` now, behind what was sent (their later release is then a no-op). */
  release(keys: readonly string[]): void
  /** Called right before the first request that changes the store (an unlink, rmdir, rename, mkdir): the operation's commit point. */
  committing(): void
}

/** Who removes or moves what, for the stages and their checks. */
function siteOf(c: MutationContext, verb: FsVerb, path: string): TreeSite {
  return { root: c.root, verb, path, orphan: (stage) => c.orphan(stage), keeper: c.keeper, clock: c.clock, sweeper: c.sweeper }
}

/** One end of a rename: its canonical key and the path its errors name. */
export interface End {
  readonly key: string
  readonly path: string
}

/** A removal: the canonical key removed, and its request. */
interface Removal {
  readonly key: string
  readonly req: RemoveRequest
}

/** A rename: its two ends, and its request. */
interface Rename {
  readonly from: End
  readonly to: End
  readonly req: RenameRequest
}

/** A stage sent with an operation's first look (stages.ts): the stage, or the error that kept it from being made. */
type Staging = ReturnType<typeof stageOrError>

/** What the locked part of a removal holds: the stage sent in the target's directory, and the lock. */
interface RemoveHeld {
  readonly staging: Staging
  readonly hold: LeaseHold
}

/** What the locked part of a rename holds: the stages sent (`to`'s: none when it is `from`'s directory), and the lock. */
interface RenameHeld {
  readonly staging: readonly [Staging, Promise<Awaited<Staging> | undefined>]
  /** Where a stage the move made later (in a directory it made) is put, for the caller to drop. */
  readonly stages: Stage[]
  readonly hold: LeaseHold
}

/** The target turned into a symbolic link since `resolve` made it canonical. */
function nowALink(verb: FsVerb, path: string): FsError {
  return FsError.io(verb, path, 'the path is a symbolic link now (it changed since it was resolved); resolve it again', { retryable: true })
}

/** The kind of an existing entry, refusing a link (see `nowALink`). */
function kindAt(attrs: Attrs, verb: FsVerb, path: string): Exclude<Kind, 'symlink'> {
  const kind = kindOf(attrs.mode)
  if (kind === 'symlink') throw nowALink(verb, path)
  return kind
}

/** The error of a source (or removal target) that is missing: `FS_NOT_FOUND`, or stale `gone` when guarded. */
function missing(verb: 'remove' | 'rename', path: string, expected: { readonly version: FsVersion } | undefined, cause?: unknown): FsError {
  return expected === undefined ? FsError.notFound(verb, path, cause) : FsError.stale(verb, path, 'gone', cause)
}

/**
 * `remove`: under the target's lock (the one guarded writes and edits take:
 * this process's mutex, then the lock entry every seamfs writer honours), the
 * target is looked at (lstat, with its realpath fenced), the guard checked on
 * its content hash (a directory's: its metadata version, as `stat` reports it,
 * so a file that took a directory's place never matches), and then unlinked or
 * rmdir-ed through a stage made in its
 * directory (stages.ts; tree.ts: `removeEntry`). A recursive remove counts the
 * tree first, then takes it down depth-first (`surveyTree`, `removeTree`); of
 * concurrent recursive removers of one tree, the one whose rmdir takes its top
 * directory succeeds, the others find it missing (`FS_NOT_FOUND`).
 */
export async function removeAt(c: MutationContext, { key, path }: End, req: RemoveRequest): Promise<FsRemoveOutcome> {
  // Core refuses the root first (the root rule, `rootTarget`); this keeps a hook called directly from touching it.
  if (key === c.root) throw FsError.storeRoot('remove', path)
  const site = siteOf(c, 'remove', path)
  return c.locked([key], { verb: 'remove', path, signal: req.signal }, async (hold) => {
    throwIfAborted(req.signal, 'remove')
    // The stage goes out with the look (same round trip); it is dropped again whatever happens.
    const staging = stageOrError(c.s, site, posix.dirname(key))
    try {
      return await removeStaged(c, site, { key, req }, { staging, hold })
    } finally {
      const staged = await staging
      // The lock's entry goes with the stage's RMDIR (same round trip): the removal is done.
      c.release([key])
      if (!('error' in staged)) await dropStage(c.s, site, staged)
    }
  })
}

async function removeStaged(c: MutationContext, site: TreeSite, removal: Removal, { staging, hold }: RemoveHeld): Promise<FsRemoveOutcome> {
  const { key, req } = removal
  const path = site.path
  const attrs = await c.current(key, 'remove', path)
  if (attrs === undefined) throw missing('remove', path, req.expected)
  const kind = kindAt(attrs, 'remove', path)
  if (kind === 'other') throw FsError.notRegularFile('remove', path)
  if (kind === 'file') {
    if (req.expected !== undefined) checkGuard('remove', path, req.expected, await c.version(key, attrs, { verb: 'remove', path, signal: req.signal }))
    throwIfAborted(req.signal, 'remove')
    hold.assertHeld('remove', path)
    const stage = stageOf(await staging)
    c.committing()
    await removeEntry(c.s, site, key, 'file', stage).catch((err: unknown) => {
      throw statusOf(err) === STATUS.NO_SUCH_FILE ? missing('remove', path, req.expected, err) : err
    })
    c.versions.forget(key)
    return { type: 'file', entries: 1 }
  }
  // A directory's version is its metadata, as `stat` reports it; a file's is never one.
  if (req.expected !== undefined) checkGuard('remove', path, req.expected, metadataVersion('directory', attrs))
  const stage = stageOf(await staging)
  if (!req.recursive) {
    hold.assertHeld('remove', path)
    c.committing()
    await removeEmpty(c, site, removal, stage)
    return { type: 'directory', entries: 1 }
  }
  // The tree gone meanwhile (another remover finished it first): missing, as for any target that vanished.
  const vanished = (err: unknown): never => {
    throw statusOf(err) === STATUS.NO_SUCH_FILE ? missing('remove', path, req.expected, err) : err
  }
  const { tree } = await surveyTree(c.s, site, key, req).catch(vanished)
  throwIfAborted(req.signal, 'remove')
  hold.assertHeld('remove', path)
  c.committing()
  try {
    return { type: 'directory', entries: await removeTree(c.s, site, tree, stage).catch(vanished) }
  } finally {
    c.versions.forgetBelow(key)
  }
}

/**
 * The rmdir of a directory that should be empty. OpenSSH folds ENOTEMPTY into a generic FAILURE:
 * a listing tells. What dead writers left there (stages, lock entries: hidden from listings) is
 * removed (sweep.ts rules) and the rmdir tried once more; entries, or a live writer's stage or
 * lock entry, are `FS_NOT_EMPTY` (retryable for the latter: a write in progress there).
 */
async function removeEmpty(c: MutationContext, site: TreeSite, { key, req }: Removal, stage: Stage): Promise<void> {
  const path = site.path
  for (let attempt = 0; ; attempt++) {
    try {
      await removeEntry(c.s, site, key, 'directory', stage)
      return
    } catch (err) {
      if (statusOf(err) === STATUS.NO_SUCH_FILE) throw missing('remove', path, req.expected, err)
      if (statusOf(err) !== STATUS.FAILURE) throw err
      const left = await entriesOf(c.s, key, (name) => !isReservedName(name)).catch(() => undefined)
      if (left === undefined || left.length === 0) throw err
      if (left.some((e) => !isReservedName(e.name))) throw FsError.notEmpty('remove', path, err)
      if (attempt > 0) {
        const reason = "the directory holds another writer's staging directory or lock entry (a write in progress there); try again"
        throw FsError.at('FS_NOT_EMPTY', 'remove', path, reason, { retryable: true, cause: err })
      }
      await c.sweeper.clear(c.s, left, (name) => `${through(stage, nameOf(key))}/${name}`)
    }
  }
}

/**
 * `rename`: under the locks of both ends, both are looked at, the guards
 * checked on content hashes (a directory source's on its metadata version), missing parents of `to` made, and the entry moved
 * (tree.ts: `moveEntry`). Without a file to replace, OpenSSH's plain rename:
 * link() + unlink() for a file, which fails when `to` exists, whoever made it
 * (so no other client's file is ever replaced), a stat then rename() for a
 * directory (a racing client's EMPTY directory made at `to` in between would be
 * replaced). Replacing: `posix-rename@openssh.com`, atomic; the destination's
 * version is checked under the locks only (the `replaceIfVersion: 'seamfs'`
 * strength: every seamfs writer takes them, a program that knows nothing of
 * them can change it between the check and the rename).
 */
export async function renameAt(c: MutationContext, from: End, to: End, req: RenameRequest): Promise<FsRenameOutcome> {
  if (from.key === c.root) throw FsError.storeRoot('rename', from.path)
  if (to.key === c.root) throw FsError.storeRoot('rename', to.path)
  return c.locked([from.key, to.key], { verb: 'rename', path: from.path, signal: req.signal }, async (hold) => {
    throwIfAborted(req.signal, 'rename')
    const site = siteOf(c, 'rename', from.path)
    const [fromDir, toDir] = [posix.dirname(from.key), posix.dirname(to.key)]
    // The stages go out with the looks (same round trip); `to`'s directory may not exist yet.
    const staging = [stageOrError(c.s, site, fromDir), toDir === fromDir ? Promise.resolve(undefined) : stageOrError(c.s, site, toDir)] as const
    const stages: Stage[] = []
    try {
      return await renameStaged(c, site, { from, to, req }, { staging, stages, hold })
    } finally {
      for (const outcome of await Promise.all(staging)) if (outcome !== undefined && !('error' in outcome)) stages.push(outcome)
      // The locks' entries go with the stages' RMDIRs (same round trip): the move is done.
      c.release([from.key, to.key])
      await Promise.all([...new Set(stages)].map((stage) => dropStage(c.s, site, stage)))
    }
  })
}

async function renameStaged(c: MutationContext, site: TreeSite, rename: Rename, { staging, stages, hold }: RenameHeld): Promise<FsRenameOutcome> {
  const { from, to, req } = rename
  const [src, dst] = await Promise.all([c.current(from.key, 'rename', from.path), c.current(to.key, 'rename', to.path)])
  if (src === undefined) throw missing('rename', from.path, req.expected)
  const kind = kindAt(src, 'rename', from.path)
  if (kind === 'other') throw FsError.notRegularFile('rename', from.path)
  if (dst !== undefined) refuseDestination(kind, kindAt(dst, 'rename', to.path), to.path, req.overwrite)
  let version: FsVersion | undefined
  if (kind === 'file') {
    version = await c.version(from.key, src, { verb: 'rename', path: from.path, signal: req.signal })
    if (version === undefined) throw missing('rename', from.path, req.expected)
    checkGuard('rename', from.path, req.expected, version)
  } else if (req.expected !== undefined) {
    checkGuard('rename', from.path, req.expected, metadataVersion('directory', src))
  }
  let replacing = dst !== undefined
  if (dst !== undefined && typeof req.overwrite === 'object') {
    const current = await c.version(to.key, dst, { verb: 'rename', path: to.path, signal: req.signal })
    // Gone meanwhile: a missing destination is created, and the plain rename makes sure no one else's file is replaced.
    if (current !== undefined) checkGuard('rename', to.path, req.overwrite, current)
    replacing = current !== undefined
  }
  // `overwrite: true` may replace any file, also one made after the look: posix-rename whenever a file moves.
  const replace = kind === 'file' && (replacing || req.overwrite === true)
  throwIfAborted(req.signal, 'rename')
  const toDir = posix.dirname(to.key)
  const made = await ensureDirectory(c.s, toDir, { root: c.root, verb: 'rename', path: to.path, making: () => c.committing() })
  let after: Attrs | undefined
  let late: Stage | undefined
  try {
    const fromStage = stageOf(await staging[0])
    const early = (await staging[1]) ?? fromStage
    // In a directory made just now, the stage is made now; one that failed for another reason fails the move.
    const toStage = 'error' in early && made !== undefined ? (late = await makeStage(c.s, site, toDir)) : stageOf(early)
    hold.assertHeld('rename', from.path)
    c.committing()
    after = await moveEntry(c.s, site, { from: from.key, to: to.key, replace, stages: { from: fromStage, to: toStage } })
  } catch (err) {
    if (late !== undefined) await dropStage(c.s, site, late)
    if (made !== undefined) await removeMade(c.s, toDir, made).catch(() => undefined)
    throw await explainFailedMove(c, rename, kind, err)
  }
  if (late !== undefined) stages.push(late)
  if (kind === 'directory') c.versions.forgetBelow(from.key)
  else c.versions.move(from.key, to.key)
  return { type: kind, replaced: replacing, version: version ?? (await directoryVersion(c, to, after)) }
}

/** Refuses an existing destination that this rename may not replace. */
function refuseDestination(kind: Kind, there: Kind, path: string, overwrite: RenameRequest['overwrite']): void {
  if (overwrite === false) throw FsError.destinationExists('rename', path)
  if (there !== 'file') throw FsError.notRegularFile('rename', path)
  // A directory never replaces a file (the server's rename() would refuse it too).
  if (kind === 'directory') throw FsError.unsupported('rename', path, 'a directory never replaces a file')
}

/** A moved directory's version: from the attrs the move's probes saw, else a fresh stat. */
async function directoryVersion(c: MutationContext, to: End, seen: Attrs | undefined): Promise<FsVersion> {
  const attrs = seen !== undefined && kindOf(seen.mode) === 'directory' ? seen : await c.s.stat(to.key)
  return metadataVersion('directory', attrs)
}

/**
 * What a failed move means, from a fresh look at both ends: the source gone
 * (another renamer or remover won), the destination taken meanwhile (the
 * plain rename refused to replace it), or the server's own error.
 */
async function explainFailedMove(c: MutationContext, { from, to, req }: Rename, kind: Kind, err: unknown): Promise<unknown> {
  const status = statusOf(err)
  if (status !== STATUS.NO_SUCH_FILE && status !== STATUS.FAILURE) return err
  const [src, dst] = await Promise.all([c.s.lstat(from.key).catch(() => undefined), c.s.lstat(to.key).catch(() => undefined)])
  if (src === undefined) return missing('rename', from.path, req.expected, err)
  if (dst === undefined) return err
  const there = kindOf(dst.mode)
  if (req.overwrite === false) return FsError.destinationExists('rename', to.path, err)
  if (there !== 'file') return FsError.notRegularFile('rename', to.path, err)
  if (kind === 'directory') return FsError.unsupported('rename', to.path, 'a directory never replaces a file', err)
  return typeof req.overwrite === 'object' ? FsError.stale('rename', to.path, 'changed', err) : err
}
