/**
 * Locks that hold among every seamfs writer of one store, in any process, on any machine: a lock
 * is an entry in the store itself (a file made with an exclusive create, an object made with
 * `If-None-Match: *`), carrying its owner and lease. A backend supplies the four store operations
 * ({@link LeaseStore}); the waiting, the lease, the judgement of a stale or hostile entry and the
 * renewal are here, once.
 *
 * Rules:
 * - An entry is made whole or judged by its age: an entry whose text is not a lease record (torn by
 *   a writer that died while making it, or planted by a careless or hostile process) counts as
 *   held until {@link DEFAULT_LEASE_MS} has passed since it was last touched, then as stale.
 * - A record's lease is capped at {@link MAX_LEASE_MS}: no entry blocks longer than that after its
 *   holder stopped renewing it. A record on this host (same boot, same pid namespace) whose
 *   process is gone is stale at once: a killed holder on this machine costs no lease.
 * - An entry that is not a file (a directory, a link) is never removed or followed: the wait
 *   fails at once with a retryable `FS_IO_ERROR` that names it.
 * - A waiter polls with a jittered, growing delay up to `maxWaitMs`, then fails with a retryable
 *   `FS_IO_ERROR` naming the holder; an abort ends the wait with `FS_ABORTED`. Within one process,
 *   callers queue on a FIFO mutex first, so one waiter per key polls the store.
 * - The holder renews its entry every third of the lease; a renewal that finds the entry is no
 *   longer its own fails. {@link LeaseHold.assertHeld} throws when four fifths of the lease have
 *   passed since the start of the last renewal that worked (a monotonic clock), or when the store
 *   can tell at once that the entry is no longer the holder's (`stillHeld`), so a holder that was
 *   frozen past its lease does not commit over a writer who took the lock since.
 */
import { hostname } from 'node:os'
import { readFileSync, readlinkSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { FsError, type FsVerb } from './errors.js'

/** The lease of an entry made by this process, unless the backend says otherwise. */
export const DEFAULT_LEASE_MS = 10_000
/** No record's lease counts for more than this, whatever it says. */
export const MAX_LEASE_MS = 120_000
/** How long a waiter waits for a lock by default before it fails (retryable). */
export const DEFAULT_LOCK_WAIT_MS = 30_000

/** One lock entry as the store holds it. */
export interface LeaseEntry {
  /** The entry's text; `undefined` when the entry is not a regular file (a directory, a link, …). */
  readonly text: string | undefined
  /** What identifies this entry (inode and text, ETag, …): `remove` removes only this one. */
  readonly token: string
  /** Milliseconds since the entry was made or last renewed, by the store's clock (negative: in the future). */
  readonly ageMs: number
}

/** The four operations a backend gives for its lock entries; `key` is the locked target's key. */
export interface LeaseStore {
  /** Makes the entry of `key` holding `text` when there is none: its token, or `undefined` when one exists. */
  create(key: string, text: string, signal: AbortSignal | undefined): Promise<string | undefined> | string | undefined
  /** The entry of `key`, or `undefined` when there is none. */
  inspect(key: string, signal: AbortSignal | undefined): Promise<LeaseEntry | undefined> | LeaseEntry | undefined
  /** Removes the entry of `key` when it is still the one of `token` (else nothing). */
  remove(key: string, token: string): Promise<void> | void
  /** Marks the entry `token` of `key` fresh (its age back to 0); throws when the entry is no longer the one of `token`. */
  renew(key: string, token: string): Promise<void> | void
  /**
   * Optional, synchronous: whether the entry of `key` is still the one of `token`, asked right
   * before a commit (a store at hand answers in microseconds; a remote one leaves it out).
   */
  stillHeld?(key: string, token: string): boolean
  /** Where the entry of `key` is, for messages. */
  describe(key: string): string
}

/** Tuning of a {@link LeaseLocks}. */
export interface LeaseOptions {
  /** Lease written into this process's entries (ms); renewed every third of it. Default {@link DEFAULT_LEASE_MS}. */
  readonly leaseMs?: number | undefined
  /** How long to wait for a lock before failing (ms). Default {@link DEFAULT_LOCK_WAIT_MS}. */
  readonly maxWaitMs?: number | undefined
  /** First poll delay (ms), growing by half each time up to `maxPollMs`. Default 2. */
  readonly minPollMs?: number | undefined
  /** Longest poll delay (ms). Default 50. */
  readonly maxPollMs?: number | undefined
}

/** What this machine is, for judging whether a record's process is alive here: host, boot and pid namespace. */
export const THIS_HOST: string = (() => {
  const read = (f: () => string): string => {
    try {
      return f().trim()
    } catch {
      return ''
    }
  }
  const boot = read(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'))
  const pidns = read(() => readlinkSync('/proc/self/ns/pid'))
  return `${hostname()}|${boot}|${pidns}`.replace(/\s/g, '_')
})()

/** {@link THIS_HOST} as it stands in a lease record: 12 hex digits of its SHA-256. */
export const HOST_ID: string = createHash('sha256').update(THIS_HOST).digest('hex').slice(0, 12)

/**
 * A parsed lease record: `sfl1 <host id> <pid> <nonce> <leaseMs>`. Short on purpose (under 60
 * bytes): a backend may keep it in a symlink's text, which the file system stores in the inode.
 */
export interface LeaseRecord {
  /** {@link HOST_ID} of the holder's machine. */
  readonly host: string
  readonly pid: number
  readonly nonce: string
  readonly leaseMs: number
}

const RECORD = /^sfl1 ([0-9a-f]{12}) (\d{1,10}) ([0-9a-f]{16,32}) (\d{1,9})\n?$/

/** The text of a lease record. */
export function formatLeaseRecord(record: LeaseRecord): string {
  return `sfl1 ${record.host} ${record.pid} ${record.nonce} ${record.leaseMs}`
}

/** The record in `text`, or `undefined` when it is not one (torn, garbage). */
export function parseLeaseRecord(text: string): LeaseRecord | undefined {
  const m = RECORD.exec(text)
  if (m === null) return undefined
  return { host: m[1] as string, pid: Number(m[2]), nonce: m[3] as string, leaseMs: Number(m[4]) }
}

/** Whether process `pid` may be alive on this machine (in this pid namespace): false only when the kernel says there is none. */
export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // Only "no such process" means dead: EPERM is someone else's live process, anything else unknown.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** Why an entry may be taken over, or `undefined` while it is held. */
export function staleReason(entry: LeaseEntry, defaultLeaseMs = DEFAULT_LEASE_MS): string | undefined {
  const record = entry.text === undefined ? undefined : parseLeaseRecord(entry.text)
  const lease = Math.min(record?.leaseMs ?? defaultLeaseMs, MAX_LEASE_MS)
  if (record !== undefined && record.host === HOST_ID && record.pid !== process.pid && !pidIsAlive(record.pid)) {
    return `its holder (pid ${record.pid} on this host) is gone`
  }
  if (entry.ageMs > lease) return `its lease ran out ${Math.round(entry.ageMs - lease)} ms ago`
  // A time far in the future (a hostile or broken clock) would block until then; a live holder on
  // this host (its clock stepped back) renews it to the new now within a third of its lease.
  const liveHere = record !== undefined && record.host === HOST_ID
  if (entry.ageMs < -lease && !liveHere) return 'its time lies in the future'
  return undefined
}

/** Who holds an entry, for messages. */
function holderOf(entry: LeaseEntry): string {
  if (entry.text === undefined) return 'an entry that is not a file'
  const record = parseLeaseRecord(entry.text)
  if (record === undefined) return `an entry that is not a lock record (${JSON.stringify(entry.text.slice(0, 40))})`
  return `pid ${record.pid} on ${record.host === HOST_ID ? 'this host' : `host ${record.host}`}`
}

/** What a lock is taken for: messages, the caller's abort, and (optional) when the wait must end (`Date.now()` ms). */
export interface LockContext {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
  /** The wait ends here (else `maxWaitMs` after it began): a caller that queued in its process first passes what is left. */
  readonly deadline?: number | undefined
}

/** A held lock. */
export interface LeaseHold {
  /** Throws a retryable `FS_IO_ERROR` when the lease may have run out (no renewal worked within it). */
  assertHeld(verb: FsVerb, path: string): void
}

interface Held {
  readonly key: string
  readonly token: string
  readonly text: string
  /** `performance.now()` at the start of the last renewal that worked (or of the create). */
  lastRenewed: number
  timer: ReturnType<typeof setInterval> | undefined
}

/** Nonces unique to this process: a random base and a counter (no entropy drawn per lock). */
const NONCE_BASE = randomBytes(4).toString('hex')
let nonceCounter = 0
const nextNonce = (): string => NONCE_BASE + (nonceCounter++ % 0x100000000).toString(16).padStart(8, '0')

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

/**
 * Cross-process locks over one {@link LeaseStore}. `run(keys, …, fn)` takes every key's lock (in
 * sorted order, so two callers of the same pair cannot deadlock), runs `fn`, and releases them.
 */
export class LeaseLocks {
  readonly #store: LeaseStore
  readonly #leaseMs: number
  readonly #maxWaitMs: number
  readonly #minPollMs: number
  readonly #maxPollMs: number

  constructor(store: LeaseStore, options: LeaseOptions = {}) {
    this.#store = store
    this.#leaseMs = Math.min(options.leaseMs ?? DEFAULT_LEASE_MS, MAX_LEASE_MS)
    this.#maxWaitMs = options.maxWaitMs ?? DEFAULT_LOCK_WAIT_MS
    this.#minPollMs = options.minPollMs ?? 2
    this.#maxPollMs = options.maxPollMs ?? 50
  }

  /** The lease this process writes into its entries. */
  get leaseMs(): number {
    return this.#leaseMs
  }

  /** How long a caller waits for a lock, in all, before it fails. */
  get maxWaitMs(): number {
    return this.#maxWaitMs
  }

  async run<T>(keys: readonly string[], ctx: LockContext, fn: (hold: LeaseHold) => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort()
    const held: Held[] = []
    try {
      for (const key of sorted) held.push(await this.#acquire(key, ctx))
      const hold: LeaseHold = {
        assertHeld: (verb, path) => {
          for (const h of held) {
            const lapsed = performance.now() - h.lastRenewed > this.#leaseMs * 0.8
            if (lapsed || this.#store.stillHeld?.(h.key, h.token) === false) {
              const why = lapsed ? 'was not renewed within its lease' : 'was taken over by another writer'
              throw FsError.io(verb, path, `the lock ${this.#store.describe(h.key)} ${why}; nothing was changed`, { retryable: true })
            }
          }
        },
      }
      return await fn(hold)
    } finally {
      for (const h of held.reverse()) await this.#release(h)
    }
  }

  async #acquire(key: string, ctx: LockContext): Promise<Held> {
    const started = Date.now()
    const maxWaitMs = ctx.deadline === undefined ? this.#maxWaitMs : Math.max(0, ctx.deadline - started)
    let delay = this.#minPollMs
    let last: LeaseEntry | undefined
    for (;;) {
      if (ctx.signal?.aborted === true) throw FsError.aborted(ctx.verb, ctx.signal.reason)
      const text = formatLeaseRecord({ host: HOST_ID, pid: process.pid, nonce: nextNonce(), leaseMs: this.#leaseMs })
      const creating = performance.now()
      const token = await this.#store.create(key, text, ctx.signal)
      if (token !== undefined) {
        const h: Held = { key, token, text, lastRenewed: creating, timer: undefined }
        h.timer = setInterval(() => void this.#renew(h), Math.max(1, Math.floor(this.#leaseMs / 3)))
        h.timer.unref()
        return h
      }
      const entry = await this.#store.inspect(key, ctx.signal)
      if (entry === undefined) continue
      if (entry.text === undefined) {
        throw FsError.io(ctx.verb, ctx.path, `the lock entry ${this.#store.describe(key)} is not a file: remove it to unblock writers`, { retryable: true })
      }
      if (staleReason(entry, this.#leaseMs) !== undefined) {
        await this.#store.remove(key, entry.token)
        continue
      }
      last = entry
      const waited = Date.now() - started
      if (waited >= maxWaitMs) {
        throw FsError.io(ctx.verb, ctx.path, `busy: ${this.#store.describe(key)} is held by ${holderOf(last)}; waited ${waited} ms, try again later`, {
          retryable: true,
        })
      }
      await sleep(Math.min(delay * (0.5 + Math.random()), maxWaitMs - waited), ctx.signal)
      delay = Math.min(delay * 1.5, this.#maxPollMs)
    }
  }

  async #renew(h: Held): Promise<void> {
    const renewing = performance.now()
    try {
      await this.#store.renew(h.key, h.token)
      h.lastRenewed = renewing
    } catch {
      // A renewal that failed leaves the lease to run out; assertHeld says so before a commit.
    }
  }

  async #release(h: Held): Promise<void> {
    clearInterval(h.timer)
    try {
      await this.#store.remove(h.key, h.token)
    } catch {
      // An entry that cannot be removed now is stale once its lease runs out.
    }
  }
}
