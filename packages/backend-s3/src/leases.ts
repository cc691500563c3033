/**
 * Cross-process locks over S3: one lock object per locked key, in a namespace no path reaches.
 *
 * The rule these locks serve: no operation removes, truncates or undoes anything it cannot prove
 * it created itself. A DELETE on radosgw takes no condition, so a remove, a rename's delete of its
 * source, or the undo of a rename's copy is safe against other seamfs writers only while no other
 * seamfs writer can change that key: every seamfs writer of the key (remove, rename, write, edit)
 * holds its lock object meanwhile (`removeIfVersion: 'seamfs'`). A writer that knows nothing of
 * seamfs takes no lock and can still slip between a check and a DELETE.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { GetObjectCommand } from '@aws-sdk/client-s3'
import {
  DEFAULT_LEASE_MS,
  DEFAULT_LOCK_WAIT_MS,
  formatLeaseRecord,
  LeaseLocks,
  MAX_LEASE_MS,
  parseLeaseRecord,
  type LeaseEntry,
  type LeaseStore,
} from '@seamfs/core/backend'
import { httpStatusOf, noteOutcome } from './errors.js'
import type { S3FileSystemOptions } from './options.js'
import type { Store } from './store.js'
import type { PutConflict, PutResult } from './revisions.js'

/**
 * Where lock objects live: `/.seamfs-locks/<sha256 hex of the object key>` at the bucket root,
 * behind an empty path segment. Every filesystem over the bucket, whatever its prefix, computes the
 * same lock object for the same key, and none sees it: no path resolves to a key with an empty
 * segment (`//` collapses, and a path never starts a key with `/`), listings skip the empty name
 * (the bucket-root filesystem's `/` listing gets the common prefix `/`, named `""`), so no walk,
 * glob, recursive remove or emptiness check below the root meets it, and no write can target it.
 */
export const LOCK_NAMESPACE = '/.seamfs-locks/'

/** The most of a lock object's body that is read: a record is about 200 bytes; more is not a record. */
export const MAX_LOCK_BYTES = 1024

/** The Content-Type of lock objects. */
const LOCK_CONTENT_TYPE = 'text/plain; charset=utf-8'

/**
 * A lock object that was taken over from a stale holder and not yet re-made: free to take (by a
 * PUT `If-Match` of its ETag). It exists so that a takeover never DELETEs: see {@link S3LeaseStore.remove}.
 */
const FREE = /^seamfs-lock-free [0-9a-f]{24}\n$/

/** A release skips its HEAD while its record is younger than the lease by this much (client clock against the server's). */
const FRESH_MARGIN_MS = 1_000

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex')
const encode = (text: string): Uint8Array => new TextEncoder().encode(text)

/** The lock object of the object `key`. */
export function lockObjectKey(key: string): string {
  return LOCK_NAMESPACE + sha256(key)
}

/**
 * Whether lock objects can be made in this bucket: a PUT `If-None-Match: *` of a scratch lock
 * object is accepted (then it is deleted). A refusal (403 where a policy allows only the prefix,
 * 400 where a key may not start with `/`) is false; a 5xx or no answer makes the probe fail.
 */
export async function probeLockNamespace(store: Store): Promise<boolean> {
  const key = `${LOCK_NAMESPACE}probe-${randomUUID()}`
  let put: PutResult
  try {
    put = await store.put(key, encode('seamfs lock namespace probe\n'), { ifNoneMatch: '*', contentType: LOCK_CONTENT_TYPE })
  } catch (err) {
    const status = httpStatusOf(err)
    if (status !== undefined && status >= 400 && status < 500) return false
    throw err
  }
  if (!put.ok) {
    if (put.unanswered || put.status >= 500) throw put.error
    return false
  }
  await store.remove(key)
  return true
}

/** A lock object as one GET found it. */
interface Found {
  readonly text: string
  readonly etag: string
  /** Milliseconds since it was last written, by the server's clock. */
  readonly ageMs: number
}

/** A lock object this store made and still holds. */
interface Held {
  etag: string
  text: string
  /** `performance.now()` when the PUT that wrote it was sent (before the server's Last-Modified). */
  writtenAt: number
  /** A renewal in flight: the release waits for it. */
  renewing: Promise<void> | undefined
}

/** What the lease store needs from the filesystem besides the store. */
export interface LeaseStoreOptions {
  /** The lease written into records (ms). */
  readonly leaseMs: number
  /** An ETag in the `If-Match` form the server accepts. */
  ifMatch(etag: string): string
  /** Whether the server enforces `If-Match` on DELETE (the second probe, once it has run). */
  deleteIfMatch(): boolean
}

/**
 * {@link LeaseStore} over S3 lock objects (see {@link LOCK_NAMESPACE}); the key is the object key.
 * Usable only where the server enforces `If-None-Match: *` and `If-Match` on PUT and refuses
 * `If-Match` on a missing key (`S3ProbeResult.lockObjects`).
 *
 * - `create`: PUT `If-None-Match: *` with the record; its ETag (the MD5 of a record holding a
 *   random nonce, so no other writer's) is the token. A free object (a taken-over one) is taken by
 *   a PUT `If-Match` of its ETag.
 * - `inspect`: one GET, at most {@link MAX_LOCK_BYTES} read (a body that is no record is returned
 *   as text as is, and core judges it by its age); the age by the server's clock: its `Date` header
 *   minus `Last-Modified`, less one second (both have whole seconds: an age is never overstated,
 *   so nobody is taken over early, and at most two seconds late).
 * - `renew`: PUT `If-Match` of the current ETag with the record under a fresh nonce, so the ETag
 *   changes: a waiter that judged the old one stale cannot take the renewed one. The new ETag is
 *   kept here (core keeps the first token).
 * - `remove` of an entry this store holds (the release): DELETE (`If-Match` too where the server
 *   enforces it); while the record is younger than the lease (less a margin) no other writer can
 *   have replaced it (a takeover needs a stale record), else HEAD first and DELETE only while the
 *   ETag is still ours. Window: a writer that took it over between that HEAD and the DELETE loses
 *   its lock object; only a holder frozen for longer than its lease gets there.
 * - `remove` of another's entry (a stale one being taken over): never a DELETE; PUT `If-Match` of
 *   its token with a free marker: atomic, so of two writers taking over one stale entry exactly one
 *   succeeds, and an entry renewed meanwhile (new ETag) is kept.
 */
export class S3LeaseStore implements LeaseStore {
  readonly #store: Store
  readonly #options: LeaseStoreOptions
  /** Held entries by `key \0 first token`. */
  readonly #held = new Map<string, Held>()

  constructor(store: Store, options: LeaseStoreOptions) {
    this.#store = store
    this.#options = options
  }

  async create(key: string, text: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    try {
      return await this.#create(key, text, signal)
    } catch (err) {
      throw lockFailure(err)
    }
  }

  async inspect(key: string, signal: AbortSignal | undefined): Promise<LeaseEntry | undefined> {
    let found: Found | undefined
    try {
      found = await this.#read(lockObjectKey(key), signal)
    } catch (err) {
      throw lockFailure(err)
    }
    // A free object is no holder's: `create` takes it.
    if (found === undefined || FREE.test(found.text)) return undefined
    return { text: found.text, token: found.etag, ageMs: found.ageMs }
  }

  async #create(key: string, text: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    const lockKey = lockObjectKey(key)
    const bytes = encode(text)
    const writtenAt = performance.now()
    const put = await this.#store.put(lockKey, bytes, { ifNoneMatch: '*', contentType: LOCK_CONTENT_TYPE })
    if (put.ok) return this.#hold(key, put.revision.etag, text, writtenAt)
    this.#assertRace(put)
    // An attempt whose answer was lost may have made it (the retry then met it): its ETag is our record's MD5.
    const found = await this.#read(lockKey, signal)
    if (found?.etag === md5(bytes)) return this.#hold(key, found.etag, text, writtenAt)
    if (found === undefined || !FREE.test(found.text)) return undefined
    const taken = await this.#store.put(lockKey, bytes, { ifMatch: this.#options.ifMatch(found.etag), contentType: LOCK_CONTENT_TYPE })
    if (taken.ok) return this.#hold(key, taken.revision.etag, text, writtenAt)
    this.#assertRace(taken)
    const now = await this.#read(lockKey, signal)
    return now?.etag === md5(bytes) ? this.#hold(key, now.etag, text, writtenAt) : undefined
  }

  async remove(key: string, token: string): Promise<void> {
    const lockKey = lockObjectKey(key)
    const held = this.#held.get(`${key}\0${token}`)
    if (held === undefined) {
      const free = encode(`seamfs-lock-free ${randomBytes(12).toString('hex')}\n`)
      const put = await this.#store.put(lockKey, free, { ifMatch: this.#options.ifMatch(token), contentType: LOCK_CONTENT_TYPE })
      if (!put.ok) this.#assertRace(put)
      return
    }
    this.#held.delete(`${key}\0${token}`)
    await held.renewing
    const guarded = this.#options.deleteIfMatch()
    if (!guarded && performance.now() - held.writtenAt >= this.#options.leaseMs - FRESH_MARGIN_MS) {
      const now = await this.#store.head(lockKey)
      if (now?.etag !== held.etag) return
    }
    const removed = await this.#store.remove(lockKey, guarded ? this.#options.ifMatch(held.etag) : undefined)
    if (!removed.ok && removed.status !== 412 && removed.status !== 404) throw removed.error
  }

  async renew(key: string, token: string): Promise<void> {
    const held = this.#held.get(`${key}\0${token}`)
    if (held === undefined) return
    const step = this.#renew(key, held)
    held.renewing = step.catch(() => undefined)
    await step
  }

  describe(key: string): string {
    return `s3://${this.#store.bucket}/${lockObjectKey(key)} (the lock of "${key}")`
  }

  async #renew(key: string, held: Held): Promise<void> {
    const record = parseLeaseRecord(held.text)
    if (record === undefined) throw new Error('not a lease record')
    const text = formatLeaseRecord({ ...record, nonce: randomBytes(12).toString('hex') })
    const bytes = encode(text)
    const writtenAt = performance.now()
    const put = await this.#store.put(lockObjectKey(key), bytes, { ifMatch: this.#options.ifMatch(held.etag), contentType: LOCK_CONTENT_TYPE })
    let etag: string | undefined = put.ok ? put.revision.etag : undefined
    if (!put.ok && (put.status === 0 || put.unanswered)) {
      const now = await this.#read(lockObjectKey(key), undefined)
      if (now?.etag === md5(bytes)) etag = now.etag
    }
    if (etag === undefined) throw new Error(`the lock object of "${key}" was not renewed (status ${put.ok ? 200 : put.status})`)
    Object.assign(held, { etag, text, writtenAt })
  }

  #hold(key: string, etag: string, text: string, writtenAt: number): string {
    this.#held.set(`${key}\0${etag}`, { etag, text, writtenAt, renewing: undefined })
    return etag
  }

  /** A refused conditional PUT of a lock object is a lost race (412, 409, or our own attempt with a lost answer); anything else is thrown. */
  #assertRace(conflict: PutConflict): void {
    if (conflict.status === 412 || conflict.status === 409 || conflict.status === 404 || conflict.unanswered) return
    throw conflict.error
  }

  /** One GET of a lock object: its first {@link MAX_LOCK_BYTES} as text, its ETag, and its age by the server's clock. */
  async #read(lockKey: string, signal: AbortSignal | undefined): Promise<Found | undefined> {
    let serverDate: number | undefined
    const command = new GetObjectCommand({ Bucket: this.#store.bucket, Key: lockKey })
    command.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args)
        const date = (result.response as { headers?: Record<string, string | undefined> }).headers?.['date']
        serverDate = date === undefined ? undefined : Date.parse(date)
        return result
      },
      { step: 'deserialize', name: 'seamfsServerDate' },
    )
    let out
    try {
      out = await this.#store.client.send(command, signal === undefined ? {} : { abortSignal: signal })
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined
      throw err
    }
    const chunks: Buffer[] = []
    let length = 0
    const body = out.Body as Readable | undefined
    if (body !== undefined) {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk)
        length += chunk.byteLength
        if (length >= MAX_LOCK_BYTES) break
      }
      body.destroy()
    }
    const text = Buffer.concat(chunks).subarray(0, MAX_LOCK_BYTES).toString('utf8')
    const modified = out.LastModified?.getTime()
    // Without a Date header (no HTTP server should omit it), this machine's clock stands in.
    const now = serverDate !== undefined && Number.isFinite(serverDate) ? serverDate : Date.now()
    const raw = modified === undefined || Number.isNaN(modified) ? 0 : now - modified
    return { text, etag: (out.ETag ?? '').replace(/^(?:W\/)?"(.*)"$/, '$1'), ageMs: raw >= 0 ? Math.max(0, raw - 1000) : raw }
  }
}

/**
 * A lock object's failure, as the operation that takes the lock sees it: whatever became of the
 * lock object's request, the operation's own target is untouched (it is changed only under the
 * lock), so the failure never makes that operation indeterminate.
 */
function lockFailure(err: unknown): unknown {
  return noteOutcome(err, { mutation: false, lostAnswer: false })
}

/** The lease and the longest wait of one filesystem's locks (its `lockLeaseMs` and `lockWaitMs`). */
export interface LeaseTuning {
  readonly leaseMs: number
  readonly maxWaitMs: number
}

/** `lockLeaseMs` and `lockWaitMs` checked, defaults filled in. */
export function leaseOptionsOf(options: Readonly<S3FileSystemOptions>): LeaseTuning {
  const leaseMs = options.lockLeaseMs ?? DEFAULT_LEASE_MS
  const maxWaitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1000 || leaseMs > MAX_LEASE_MS)
    throw new RangeError(`lockLeaseMs must be an integer within 1000..${MAX_LEASE_MS}`)
  if (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0) throw new RangeError('lockWaitMs must be a non-negative integer')
  return { leaseMs, maxWaitMs }
}

/** The lock objects of one filesystem: core's lease locks over {@link S3LeaseStore}, polled 10 ms first, growing to 100 ms. */
export function s3LeaseLocks(store: Store, tuning: LeaseTuning, ifMatch: (etag: string) => string, deleteIfMatch: () => boolean): LeaseLocks {
  const leases = new S3LeaseStore(store, { leaseMs: tuning.leaseMs, ifMatch, deleteIfMatch })
  return new LeaseLocks(leases, { leaseMs: tuning.leaseMs, maxWaitMs: tuning.maxWaitMs, minPollMs: 10, maxPollMs: 100 })
}
