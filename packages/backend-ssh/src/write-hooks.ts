/** `writeText`'s and `editText`'s hooks on SFTP: a new file published with a hard link, a replacement or an edit under the target's lock. */
import { posix } from 'node:path'
import {
  FsError,
  throwIfAborted,
  type FsTarget,
  type FsVersion,
  type LeaseHold,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import type { CommitPoint } from './errors.js'
import type { FileHints } from './hints.js'
import type { TargetLocks } from './locking.js'
import type { Publisher } from './publish.js'
import type { Session } from './session.js'
import type { Sweeper } from './sweep.js'
import type { Targets } from './targets.js'
import { overlapEdit, overlapWrite, Overtaken, type OverlapPlan } from './overlap.js'
import { WRITE_AT_ONCE_BYTES, type Attrs } from './connection.js'
import { planEdit, planWrite, type PlanSite } from './writes.js'

/** What the write hooks need of their filesystem: its session, target checks, publisher, locks and sweeper. */
export interface WriteSite {
  session(): Promise<Session>
  readonly targets: Targets
  readonly hints: FileHints
  readonly publisher: Publisher
  readonly locks: TargetLocks
  readonly sweeper: Sweeper
  readonly newFileMode: number
}

/** `publishBytes`: a guarded create by hard link, without a lock; any other write under the target's lock entry, published by rename. */
export async function publishBytes(
  w: WriteSite,
  target: FsTarget,
  bytes: Uint8Array,
  { expected, signal, beforeMaxBytes, fence }: WriteRequest,
  point: CommitPoint,
): Promise<WriteResult> {
  const s = await w.session()
  const key = w.targets.key(target, 'write')
  const path = target.displayPath
  // Listings hide (and sweeps remove) such names: a file written under one would be lost from view.
  w.targets.refuseReserved(key, 'write', path)
  await w.targets.fenceFirst(s, key, 'write', target)
  if (expected?.kind === 'createIfAbsent') {
    // No lock: the hard link decides, against this process and every other client alike.
    const stated = w.targets.current(s, key, 'write', target).then((current) => {
      if (current === undefined) return w.newFileMode
      w.targets.assertFile(current, 'write', target)
      throw FsError.notObserved(path)
    })
    // A layer's fence comes in with the stage: nothing is written to the temp file before it.
    const ready = fence === undefined ? stated : Promise.all([stated, fence]).then(([mode]) => mode)
    const request = { key, displayPath: path, bytes, mode: 'link', verb: 'write', signal, guarded: false, committing: point.reached } as const
    const { attrs } = await w.publisher.publish(s, request, { ready, commit: async () => undefined }).finally(() => w.sweeper.touch(posix.dirname(key)))
    return { created: true, version: w.targets.published(key, attrs, bytes), before: null }
  }
  const guarded = expected?.kind === 'replaceIfVersion'
  // An unguarded write takes the lock entry too: an edit of another process must not read the
  // old content, publish over this write and report success (the edit's guard holds only if
  // every seamfs writer of the target takes part).
  const release = (on: Session, via: string): void => w.locks.releaseEarly(on, key, via)
  const locking = { key, verb: 'write', path, signal, fence } as const
  const outcome = (published: { attrs: Attrs }, found: { current: Attrs | undefined; read: { bytes: Buffer } | undefined }): WriteResult => {
    const before = found.read !== undefined && found.read.bytes.length <= beforeMaxBytes ? found.read.bytes : null
    return { created: found.current === undefined, version: w.targets.published(key, published.attrs, bytes), before }
  }
  const site = planSite(w, s, { key, verb: 'write', target, signal })
  return locked(
    w,
    locking,
    (hold) => {
      const plan = planWrite(site, expected, beforeMaxBytes)
      const request = { key, displayPath: path, bytes, mode: 'rename', verb: 'write', signal, guarded, hold, release, committing: point.reached } as const
      return w.publisher
        .publish(s, request, plan)
        .then((published) => outcome(published, plan.found()))
        .finally(plan.dispose)
    },
    (overlap, hold) => {
      const plan = overlapWrite({ site, ...overlap }, expected, beforeMaxBytes, bytes.length <= WRITE_AT_ONCE_BYTES)
      const request = { key, displayPath: path, bytes, mode: 'rename', verb: 'write', signal, guarded, hold, release, committing: point.reached } as const
      const publication = w.publisher.publish(s, request, plan).then((published) => outcome(published, plan.found()))
      return { plan, publication: publication.finally(plan.dispose) }
    },
  )
}

/** A locked operation of one target: its key, the verb, path and signal of its errors and waits, and a layer's fence. */
interface Locking {
  readonly key: string
  readonly verb: 'write' | 'edit'
  readonly path: string
  readonly signal: AbortSignal | undefined
  readonly fence: Promise<void> | undefined
}

/**
 * Runs a write or edit under the target's lock. Where no other operation of this process is at the
 * target, `overlapped` begins at once, while the lock is being taken (see overlap.ts): it gets
 * `locked` (resolved once the lock is held) and the layer's fence, and the requests it sends behind
 * the lock entry's link go with it. Otherwise, or when the target changed meanwhile (`Overtaken`),
 * `sequential` runs under the lock, the fence awaited first. The lock's entry is released behind
 * the rename (`release`), or once the operation failed.
 */
async function locked<T>(
  w: WriteSite,
  { key, verb, path, signal, fence }: Locking,
  sequential: (hold: LeaseHold) => Promise<T>,
  overlapped: (
    overlap: { locked: Promise<LeaseHold>; fence: Promise<void> | undefined },
    hold: LeaseHold,
  ) => { plan: OverlapPlan<unknown>; publication: Promise<T> },
): Promise<T> {
  const inTurn = (): Promise<T> =>
    w.locks.run([key], { verb, path, signal }, async (hold) => {
      await fence
      throwIfAborted(signal, verb)
      return sequential(hold)
    })
  try {
    if (w.locks.busy(key)) return await inTurn()
    let held: LeaseHold | undefined
    let grant!: (hold: LeaseHold) => void
    let refuse!: (err: unknown) => void
    const taken = new Promise<LeaseHold>((resolve, reject) => {
      grant = resolve
      refuse = reject
    })
    taken.catch(() => undefined)
    const hold: LeaseHold = {
      assertHeld: (v, p) => {
        if (held === undefined) throw FsError.io(v, p, 'the lock is not held; nothing was changed', { retryable: true })
        held.assertHeld(v, p)
      },
    }
    const { plan, publication } = overlapped({ locked: taken, fence }, hold)
    publication.catch(() => plan.abandon())
    try {
      return await w.locks.run([key], { verb, path, signal, behind: plan.behind }, (h) => {
        held = h
        throwIfAborted(signal, verb)
        grant(h)
        return publication
      })
    } catch (err) {
      refuse(err)
      // Nothing is published without the lock: the publication ends before the failure is reported.
      await publication.catch(() => undefined)
      if (!(err instanceof Overtaken)) throw err
    }
    return await inTurn()
  } finally {
    w.sweeper.touch(posix.dirname(key))
  }
}

/** `updateBytes`: the edit read, transformed and published by rename, under the target's lock entry. */
export async function updateBytes(
  w: WriteSite,
  target: FsTarget,
  { expected, signal, maxBytes, fence }: UpdateRequest,
  transform: (bytes: Uint8Array) => Uint8Array,
  point: CommitPoint,
): Promise<FsVersion> {
  const s = await w.session()
  const key = w.targets.key(target, 'edit')
  const path = target.displayPath
  w.targets.refuseReserved(key, 'edit', path)
  await w.targets.fenceFirst(s, key, 'edit', target)
  // The lock's entry goes behind the rename, in its round trip.
  const release = (on: Session, via: string): void => w.locks.releaseEarly(on, key, via)
  const site = planSite(w, s, { key, verb: 'edit', target, signal })
  const request = (hold: LeaseHold) =>
    ({ key, displayPath: path, mode: 'rename', verb: 'edit', signal, guarded: true, hold, release, committing: point.reached }) as const
  return locked(
    w,
    { key, verb: 'edit', path, signal, fence },
    (hold) => {
      const plan = planEdit(site, expected, maxBytes, transform)
      return w.publisher
        .publish(s, request(hold), plan)
        .then(({ attrs, bytes }) => w.targets.published(key, attrs, bytes))
        .finally(plan.dispose)
    },
    (overlap, hold) => {
      const plan = overlapEdit({ site, ...overlap }, expected, maxBytes, transform)
      const publication = w.publisher.publish(s, request(hold), plan).then(({ attrs, bytes }) => w.targets.published(key, attrs, bytes))
      return { plan, publication: publication.finally(plan.dispose) }
    },
  )
}

/** The target of one write or edit: its canonical key, the verb, and the caller's signal. */
interface Planned {
  readonly key: string
  readonly verb: 'write' | 'edit'
  readonly target: FsTarget
  readonly signal: AbortSignal | undefined
}

/** What the plans of writes.ts need for `key`. */
function planSite(w: WriteSite, s: Session, { key, verb, target, signal }: Planned): PlanSite {
  const path = target.displayPath
  return {
    s,
    key,
    verb,
    path,
    hinted: w.hints.fileSize(key),
    hintedMtime: w.hints.file(key)?.mtime,
    newFileMode: w.newFileMode,
    current: () => w.targets.current(s, key, verb, target),
    assertFile: (attrs) => w.targets.assertFile(attrs, verb, target),
    read: (attrs, opening, maxBytes) => w.targets.readCurrent(s, key, attrs, { verb, path, signal, opening, ...(maxBytes === undefined ? {} : { maxBytes }) }),
    settles: (attrs) => w.targets.settles(attrs),
    settled: (attrs) => w.targets.settled(key, attrs),
  }
}
