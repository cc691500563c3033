import { KeyedMutex, LeaseLocks, processWide, type FsVerb, type LeaseHold } from '@seamfs/core/backend'
import type { Session } from './connection.js'
import { LockFailure, SftpLeaseStore, type LeaseSite } from './leases.js'

/** Per-target mutexes shared by every instance (and every copy of this package) in the process. */
const mutexes: KeyedMutex = processWide('backend-ssh:locks', () => new KeyedMutex())
/** Poll delays of a lock waiter (ms): a round trip or two on a LAN, a few on loopback. */
const MIN_POLL_MS = 10
const MAX_POLL_MS = 100

/** What a locked operation is, for the lock's waits and errors. */
export interface LockedOp {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
}

/** Runs `fn` holding the mutexes of `keys`, taken in sorted order (two renames of one pair in opposite directions cannot deadlock). */
export function holdAll<T>(mutex: KeyedMutex, keys: readonly string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort()
  const hold = (i: number): Promise<T> => (i === sorted.length ? fn() : mutex.run(sorted[i] as string, () => hold(i + 1)))
  return hold(0)
}

/**
 * The per-target locks of one filesystem, in two tiers: this process's FIFO mutex per target
 * (every instance on the same server shares it, so one waiter per key per process polls the
 * store), and inside it the cross-process lease (core's `LeaseLocks` over the lock entries of
 * leases.ts), held among every seamfs writer of the server. Writes (but `createIfAbsent`, which
 * the server arbitrates with a hard link), edits, removes and renames take both.
 */
export class TargetLocks {
  readonly store: SftpLeaseStore
  readonly #leases: LeaseLocks
  readonly #scope: string

  /** `scope` names the server (instances on one server share the mutexes). */
  constructor(scope: string, site: LeaseSite, maxWaitMs: number | undefined) {
    this.#scope = scope
    this.store = new SftpLeaseStore(site)
    this.#leases = new LeaseLocks(this.store, { leaseMs: site.leaseMs, maxWaitMs, minPollMs: MIN_POLL_MS, maxPollMs: MAX_POLL_MS })
  }

  /** Runs `fn` holding both tiers for every key; `fn` calls `hold.assertHeld` right before it commits. */
  run<T>(keys: readonly string[], op: LockedOp, fn: (hold: LeaseHold) => Promise<T>): Promise<T> {
    const scoped = keys.map((key) => `${this.#scope}\0${key}`)
    return holdAll(mutexes, scoped, () => this.#leases.run(keys, op, fn)).catch((err: unknown) => {
      throw err instanceof LockFailure ? err.toFsError(op.verb, op.path) : err
    })
  }

  /** Sends the release of `key`'s entry behind what `s` sent last (leases.ts: `releaseEarly`). */
  releaseEarly(s: Session, key: string, via?: string): void {
    this.store.releaseEarly(s, key, via)
  }
}
