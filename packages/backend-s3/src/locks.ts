import { KeyedMutex, processWide, type FsVerb, type LeaseHold, type LeaseLocks } from '@seamfs/core/backend'

/**
 * Per-key locks inside this process, shared by every instance (and copy of this package) in the
 * process: the `'process'` fallback, and the first layer of the lock objects (one waiter per key
 * per process polls the store).
 */
export const LOCKS = processWide('backend-s3:locks', () => new KeyedMutex())

interface GateState {
  shared: number
  exclusive: boolean
  readonly waiters: { readonly exclusive: boolean; readonly wake: () => void }[]
}

/**
 * A FIFO shared/exclusive lock per key. Writes whose guard the server enforces hold their key
 * shared (they race each other at the server, as they should); a check-then-delete whose
 * guard the server does not enforce (radosgw ignores `If-Match` on DELETE) holds it
 * exclusively, so no write of this process lands between its check and its DELETE.
 * A shared request queued behind an exclusive one waits for it: removers are not starved.
 */
export class KeyedGate {
  readonly #states = new Map<string, GateState>()

  shared<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.#hold(key, false, fn)
  }

  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.#hold(key, true, fn)
  }

  async #hold<T>(key: string, exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    const state = this.#states.get(key) ?? { shared: 0, exclusive: false, waiters: [] }
    this.#states.set(key, state)
    const free = state.waiters.length === 0 && !state.exclusive && (!exclusive || state.shared === 0)
    if (free) this.#grant(state, exclusive)
    else await new Promise<void>((wake) => state.waiters.push({ exclusive, wake }))
    try {
      return await fn()
    } finally {
      if (exclusive) state.exclusive = false
      else state.shared--
      this.#wake(key, state)
    }
  }

  #grant(state: GateState, exclusive: boolean): void {
    if (exclusive) state.exclusive = true
    else state.shared++
  }

  #wake(key: string, state: GateState): void {
    for (let next = state.waiters[0]; next !== undefined; next = state.waiters[0]) {
      if (state.exclusive || (next.exclusive && state.shared > 0)) break
      state.waiters.shift()
      this.#grant(state, next.exclusive)
      next.wake()
      if (next.exclusive) break
    }
    if (state.waiters.length === 0 && state.shared === 0 && !state.exclusive) this.#states.delete(key)
  }
}

/** The gates of unconditional deletes and the writes they must not overtake, shared across the process like {@link LOCKS}. */
export const GATES = processWide('backend-s3:gates', () => new KeyedGate())

/**
 * Runs `fn` holding every key both ways: the key's mutex (edits and `'process'` writes take
 * it) and its gate exclusively (writes with enforced guards hold it shared). Keys are taken in
 * sorted order, so two renames of the same pair in opposite directions cannot deadlock.
 * `exclusive: false` takes the mutexes only.
 */
export function withKeysHeld<T>(keys: readonly string[], fn: () => Promise<T>, exclusive = true): Promise<T> {
  const sorted = [...new Set(keys)].sort()
  const hold = (i: number): Promise<T> => {
    const key = sorted[i]
    if (key === undefined) return fn()
    return LOCKS.run(key, () => (exclusive ? GATES.exclusive(key, () => hold(i + 1)) : hold(i + 1)))
  }
  return hold(0)
}

/** What a lock is taken for: the verb and path its errors name, and the signal that ends the wait. */
export interface LockContext {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
}

/** A key to lock: its in-process key (`bucket \0 object key`) and its object key (whose lock object is taken). */
export interface LockedKey {
  readonly local: string
  readonly object: string
}

/** How keys are held besides their in-process mutexes: `exclusive`, their gates too; `leases`, their lock objects (none when undefined). */
export interface LockScope {
  readonly exclusive: boolean
  readonly leases: LeaseLocks | undefined
}

/**
 * Runs `fn` holding every key: first in this process ({@link withKeysHeld}; `exclusive`: the
 * gates too, for check-then-DELETE), so one waiter per key and process polls the store; then,
 * with `leases`, the keys' lock objects (in key order), held among every seamfs writer of the
 * bucket. `fn` gets the lease hold (`undefined` without `leases`): it calls `assertHeld` right
 * before its commit step, so a holder frozen past its lease does not commit over the writer who
 * took the lock since.
 */
export function withLocks<T>(
  keys: readonly LockedKey[],
  { exclusive, leases }: LockScope,
  ctx: LockContext,
  fn: (hold: LeaseHold | undefined) => Promise<T>,
): Promise<T> {
  const inner = (): Promise<T> =>
    leases === undefined
      ? fn(undefined)
      : leases.run(
          keys.map((k) => k.object),
          ctx,
          (hold) => fn(hold),
        )
  return withKeysHeld(
    keys.map((k) => k.local),
    inner,
    exclusive,
  )
}
