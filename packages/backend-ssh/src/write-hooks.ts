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
  { expected, signal, beforeMaxBytes }: WriteRequest,
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
    const ready = w.targets.current(s, key, 'write', target).then((current) => {
      if (current === undefined) return w.newFileMode
      w.targets.assertFile(current, 'write', target)
      throw FsError.notObserved(path)
    })
    const request = { key, displayPath: path, bytes, mode: 'link', verb: 'write', signal, guarded: false, committing: point.reached } as const
    const { attrs } = await w.publisher.publish(s, request, { ready, commit: async () => undefined }).finally(() => w.sweeper.touch(posix.dirname(key)))
    return { created: true, version: w.targets.published(key, attrs, bytes), before: null }
  }
  const guarded = expected?.kind === 'replaceIfVersion'
  // An unguarded write takes the lock entry too: an edit of another process must not read the
  // old content, publish over this write and report success (the edit's guard holds only if
  // every seamfs writer of the target takes part).
  return w.locks
    .run([key], { verb: 'write', path, signal }, async (hold: LeaseHold | undefined) => {
      throwIfAborted(signal, 'write')
      const plan = planWrite(planSite(w, s, { key, verb: 'write', target, signal }), expected, beforeMaxBytes)
      const release = (on: Session, via: string): void => w.locks.releaseEarly(on, key, via)
      const request = { key, displayPath: path, bytes, mode: 'rename', verb: 'write', signal, guarded, hold, release, committing: point.reached } as const
      const { attrs } = await w.publisher.publish(s, request, plan).finally(plan.dispose)
      const { current, read } = plan.found()
      const before = read !== undefined && read.bytes.length <= beforeMaxBytes ? read.bytes : null
      return { created: current === undefined, version: w.targets.published(key, attrs, bytes), before }
    })
    .finally(() => w.sweeper.touch(posix.dirname(key)))
}

/** `updateBytes`: the edit read, transformed and published by rename, under the target's lock entry. */
export async function updateBytes(
  w: WriteSite,
  target: FsTarget,
  { expected, signal, maxBytes }: UpdateRequest,
  transform: (bytes: Uint8Array) => Uint8Array,
  point: CommitPoint,
): Promise<FsVersion> {
  const s = await w.session()
  const key = w.targets.key(target, 'edit')
  const path = target.displayPath
  w.targets.refuseReserved(key, 'edit', path)
  await w.targets.fenceFirst(s, key, 'edit', target)
  return w.locks
    .run([key], { verb: 'edit', path, signal }, async (hold) => {
      throwIfAborted(signal, 'edit')
      const plan = planEdit(planSite(w, s, { key, verb: 'edit', target, signal }), expected, maxBytes, transform)
      // The lock's entry goes behind the rename, in its round trip.
      const release = (on: Session, via: string): void => w.locks.releaseEarly(on, key, via)
      const request = { key, displayPath: path, mode: 'rename', verb: 'edit', signal, guarded: true, hold, release, committing: point.reached } as const
      const { attrs, bytes } = await w.publisher.publish(s, request, plan).finally(plan.dispose)
      return w.targets.published(key, attrs, bytes)
    })
    .finally(() => w.sweeper.touch(posix.dirname(key)))
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
    newFileMode: w.newFileMode,
    current: () => w.targets.current(s, key, verb, target),
    assertFile: (attrs) => w.targets.assertFile(attrs, verb, target),
    read: (attrs, opening, maxBytes) => w.targets.readCurrent(s, key, attrs, { verb, path, signal, opening, ...(maxBytes === undefined ? {} : { maxBytes }) }),
  }
}
