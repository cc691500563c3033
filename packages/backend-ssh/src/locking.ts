import { KeyedMutex, LeaseLocks, processWide, type FsVerb, type LeaseHold } from '@seamfs/core/backend'
import type { Session } from './connection.js'
import { LockFailure, SftpLeaseStore, type LeaseSite } from './leases.js'
import type { Behind } from './overlap.js'

/** Per-target mutexes shared by every instance (and every copy of this package) in the process. */
const mutexes: KeyedMutex = processWide('backend-ssh:locks', () => new KeyedMutex())
/** Locked operations of this process under way or waiting, by scoped key (every instance, every copy of this package). */
const active: Map<string, number> = processWide('backend-ssh:active-locks', () => new Map<string, number>())
/** Poll delays of a lock waiter (ms): a round trip or two on a LAN, a few on loopback. */
const MIN_POLL_MS = 10
const MAX_POLL_MS = 100

/** What a locked operation is, for the lock's waits and errors. */
export interface LockedOp {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
  /**
   * Called on the session right after each link of a lock entry of this operation is sent (one key
   * only): what it sends there is read by the server once the lock is taken (it answers in order).
   */
  readonly behind?: Behind | undefined
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
    const { behind } = op
    const [only] = keys
    const run = (): Promise<T> => {
      // This process's turn at the key: the entry's creates are this operation's until it is done.
      if (behind === undefined || only === undefined || keys.length !== 1) return this.#leases.run(keys, op, fn)
      this.store.behindLink(only, behind)
      return this.#leases.run(keys, op, fn).finally(() => this.store.behindLink(only, undefined))
    }
    for (const k of scoped) active.set(k, (active.get(k) ?? 0) + 1)
    return holdAll(mutexes, scoped, run)
      .catch((err: unknown) => {
        throw err instanceof LockFailure ? err.toFsError(op.verb, op.path) : err
      })
      .finally(() => {
        for (const k of scoped) {
          const left = (active.get(k) ?? 1) - 1
          if (left > 0) active.set(k, left)
          else active.delete(k)
        }
      })
  }

  /** True while an operation of this process holds or waits for `key`'s lock. */
  busy(key: string): boolean {
    return (active.get(`${this.#scope}\0${key}`) ?? 0) > 0
  }

  /** Sends the release of `key`'s entry behind what `s` sent last (leases.ts: `releaseEarly`). */
  releaseEarly(s: Session, key: string, via?: string): void {
    this.store.releaseEarly(s, key, via)
  }
}
