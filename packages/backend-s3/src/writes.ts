/** `writeText` / `writeBytes` over S3: one PUT, with the checks a create needs and a condition where a guard asks for one. */
import { constants as bufferConstants } from 'node:buffer'
import { setTimeout as sleep } from 'node:timers/promises'
import { checkGuard, FsError, throwIfAborted, type FsVerb, type FsVersion, type LeaseHold, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import type { ReadFor } from './body.js'
import type { S3ProbeResult } from './options.js'
import type { Paths } from './paths.js'
import { toFsError } from './errors.js'
import { type Store } from './store.js'
import { newOpId, OP_ID_META, opIdOf, versionOf, type PutConditions, type PutConflict, type PutResult, type Revision } from './revisions.js'

/** The user metadata of a PUT by operation `opId`: what lets it recognise its own object later ({@link OP_ID_META}). */
export const opMetadata = (opId: string): Record<string, string> => ({ [OP_ID_META]: opId })

/**
 * A version that can go into `If-Match` as it is: an ETag as this backend reports them (hex,
 * `-N` for multipart). Anything else (`*`, a list, a forged token with other characters) is
 * compared by this process after a HEAD instead, never sent.
 */
const ETAG_TOKEN = /^[0-9A-Za-z-]{1,128}$/

/**
 * Whether a `replaceIfVersion` can be the `If-Match` PUT alone: the server enforces `If-Match`,
 * refuses it on a missing key (else the PUT would create a file), versions are plain ETags
 * (unversioned bucket), and the version is shaped like one.
 */
function blindReplaceFits(probe: S3ProbeResult, version: FsVersion): boolean {
  return probe.replaceIfVersion && probe.ifMatchRefusesMissing && !probe.versioned && ETAG_TOKEN.test(version)
}

/** One write as its caller asks for it: the file (`rel`; `path` for the errors), its bytes, the request, and the probe it goes by. */
export interface WriteJob {
  readonly rel: string
  readonly path: string
  readonly bytes: Uint8Array
  readonly request: WriteRequest
  readonly probe: S3ProbeResult
}

/**
 * What a write asked of the store before it held its key's lock (sent together with the lock's own
 * request: one round trip, not two). Only where the server enforces both conditions: the PUT is then
 * conditional on what was read, so it lands only on the object (or the absence) that was seen.
 */
export interface Early {
  /** The checks a create needs (`createIfAbsent`). */
  readonly creatable?: Promise<void> | undefined
  /** The object as a GET (or HEAD) found it (a write that replaces). */
  readonly current?: Promise<Fetched | undefined> | undefined
}

/** One write under way: its job, its operation id (in its PUT's metadata) and the lock it holds, if any. */
interface Op extends WriteJob {
  readonly id: string
  readonly hold: LeaseHold | undefined
}

/** An object as one GET (content read) or HEAD (`bytes: null`) found it. */
export interface Fetched {
  readonly revision: Revision
  readonly bytes: Uint8Array | null
}

/** The message of a write that failed without a race, the key found as it was: nothing changed. */
const failedWrite = ({ status, unanswered }: PutConflict): string =>
  unanswered
    ? 'the write got no answer, and the file is as it was: it was not applied'
    : `the server failed a conditional write (status ${status}) and nothing changed`

/** The key a failed request was about, and the verb and path its errors name. */
export interface KeyAt {
  readonly key: string
  readonly verb: FsVerb
  readonly path: string
}

/** A write that failed at `key`: its operation's id, and the version the key held before it (`basis`; `undefined`: no object). */
export interface FailedWrite extends KeyAt {
  readonly opId: string
  readonly basis: FsVersion | undefined
}

/** What {@link afterConflict} found when the key holds no object of this write: the object there now, if any. */
export interface LostRace {
  readonly lost: Revision | undefined
}

/**
 * The key after a write that failed: one HEAD. When an attempt of the write lost its answer and this
 * HEAD fails too, the outcome is not known: `FS_IO_ERROR`, retryable, {@link FsError.indeterminate}.
 */
export async function lookAfter(store: Store, conflict: PutConflict, { key, verb, path }: KeyAt): Promise<Revision | undefined> {
  try {
    return await store.head(key)
  } catch (err) {
    if (!conflict.unanswered) throw err
    throw FsError.indeterminate(toFsError(err, verb, path, store.deadlines))
  }
}

/** What the writes need from the filesystem. */
export interface WriteContext {
  readonly paths: Paths
  readonly store: Store
  /** Whether a file lies on the path to `rel`, asked of the store now (never from `resolve`'s memory). */
  underFile(rel: string, signal: AbortSignal | undefined): Promise<boolean>
  /** Whether keys lie below `rel` (it is a directory). */
  isDirectory(rel: string, signal: AbortSignal | undefined): Promise<boolean>
  /** One GET; `wanted` sees the revision before the body is read (false: `bytes: null`). */
  fetch(rel: string, op: ReadFor, wanted: (revision: Revision) => boolean): Promise<Fetched | undefined>
  /** An ETag in the `If-Match` form the server accepts. */
  ifMatch(etag: string): string
  /** Runs `put`, which writes an object at `rel` (resolve's memory forgets the paths through it). */
  writing<T>(rel: string, put: () => Promise<T>): Promise<T>
}

/**
 * After a PUT was refused (412, 404), failed (409, 5xx), or lost an attempt's answer (`unanswered`,
 * with or without conditions): HEAD the key to learn what happened.
 * - our own object (it carries our operation's id `opId`, not merely our bytes: another writer's
 *   identical content is not ours), from an attempt whose answer was lost: the write is done, its revision;
 * - the key as it was (`basis`; absent when `undefined`): an I/O error (retryable), nothing changed:
 *   the failure was the server's or the network's, not a race;
 * - another object (or none where one was), after a lost answer: the write may have been applied
 *   and then replaced, `FS_IO_ERROR` {@link FsError.indeterminate}; else another writer changed it
 *   first: `{ lost }`, with the object there now.
 * A HEAD that fails after a lost answer is indeterminate too ({@link lookAfter}).
 */
export async function afterConflict(store: Store, conflict: PutConflict, write: FailedWrite): Promise<Revision | LostRace> {
  const { opId, basis, verb, path } = write
  const now = await lookAfter(store, conflict, write)
  if (now !== undefined && opIdOf(now) === opId) return now
  const unchanged = basis === undefined ? now === undefined : now !== undefined && versionOf(now) === basis
  if (unchanged) throw FsError.io(verb, path, failedWrite(conflict), { cause: conflict.error, retryable: true })
  if (conflict.unanswered) {
    throw FsError.io(verb, path, 'the write got no answer, and the file has changed since (another writer, or this write): it may have been applied', {
      cause: conflict.error,
      retryable: true,
      indeterminate: true,
    })
  }
  return { lost: now }
}

/**
 * The write paths, fewest round trips first (requests in one step go together):
 * - `createIfAbsent`: path check + directory check (HEAD per ancestor, LIST) → PUT `If-None-Match: *`;
 * - `replaceIfVersion` without `before` (`beforeMaxBytes` 0), where `If-Match` is enforced (also
 *   refused on a missing key) and the version is a plain ETag (unversioned bucket): PUT `If-Match`
 *   alone; the checks only when refused;
 * - otherwise GET (the `before`; HEAD when nobody wants it) → (a create: the two checks) → PUT, with
 *   `If-Match` of the revision read when guarded and enforced.
 */
export class Writes {
  readonly #ctx: WriteContext

  constructor(ctx: WriteContext) {
    this.#ctx = ctx
  }

  /**
   * One write. `hold`: the key's lock object, held by the caller where lock objects are used
   * (see `leases.ts`): checked right before the PUT. Every PUT carries a fresh operation id.
   */
  async write(job: WriteJob, hold?: LeaseHold, early?: Early): Promise<WriteResult> {
    const { expected, beforeMaxBytes } = job.request
    const op: Op = { ...job, id: newOpId(), hold }
    if (expected?.kind === 'createIfAbsent') return this.#create(op, early?.creatable)
    if (expected !== undefined && beforeMaxBytes === 0 && blindReplaceFits(job.probe, expected.version)) return this.#replaceBlind(op, expected.version)
    return this.#replace(op, early?.current)
  }

  /**
   * The reads of `job` that may go before its key's lock is held, sent now: the checks of a create,
   * the GET (or HEAD) of a replacement. None where the server does not enforce both conditions (the
   * PUT could not then be pinned to what was read) or where the write is the PUT alone.
   */
  early(job: WriteJob): Early {
    const { rel, path, request, probe } = job
    const { expected, beforeMaxBytes, signal } = request
    if (!probe.createIfAbsent || !probe.replaceIfVersion) return {}
    const settled = <T>(pending: Promise<T>): Promise<T> => {
      // Awaited by the write once it holds the lock; a lock that fails first leaves it unread.
      pending.catch(() => undefined)
      return pending
    }
    if (expected?.kind === 'createIfAbsent') return { creatable: settled(this.#assertCreatable(rel, path, signal)) }
    if (expected !== undefined && beforeMaxBytes === 0 && blindReplaceFits(probe, expected.version)) return {}
    return { current: settled(this.#current(rel, path, request)) }
  }

  /** The PUT of `op`: the lock checked first, the operation id in the metadata. */
  /** The PUT of `op`, once a layer's fence allowed it (`WriteRequest.fence`: the reads before it went with the fence's own). */
  async #put(op: Op, conditions: PutConditions | undefined): Promise<PutResult> {
    await op.request.fence
    throwIfAborted(op.request.signal, 'write')
    op.hold?.assertHeld('write', op.path)
    return this.#ctx.writing(op.rel, () => this.#ctx.store.put(this.#ctx.paths.objectKey(op.rel), op.bytes, { ...conditions, metadata: opMetadata(op.id) }))
  }

  async #create(op: Op, creatable: Promise<void> | undefined): Promise<WriteResult> {
    const { rel, path, probe } = op
    const { signal } = op.request
    const { store, paths } = this.#ctx
    const key = paths.objectKey(rel)
    const [, exists] = await Promise.all([
      creatable ?? this.#assertCreatable(rel, path, signal),
      !probe.createIfAbsent && store.head(key, signal).then((r) => r !== undefined),
    ])
    if (exists) throw FsError.notObserved(path)
    throwIfAborted(signal, 'write')
    const put = await this.#put(op, probe.createIfAbsent ? { ifNoneMatch: '*' } : undefined)
    const revision = put.ok ? put.revision : await afterConflict(store, put, { key, opId: op.id, basis: undefined, verb: 'write', path })
    if ('lost' in revision) throw FsError.notObserved(path)
    return { created: true, version: versionOf(revision), before: null }
  }

  /**
   * One PUT with `If-Match`: the server checks the version. Only a refusal (or a lost answer)
   * costs more: a HEAD ({@link afterConflict}: our own object from an attempt that got no answer
   * → success; the expected version still there → the server failed, retryable; changed after a
   * lost answer → indeterminate; else stale), and where the key is gone the checks that tell a
   * directory or a path through a file from a plain missing file.
   */
  async #replaceBlind(op: Op, version: FsVersion): Promise<WriteResult> {
    const { rel, path } = op
    const { signal } = op.request
    const { store, paths } = this.#ctx
    const key = paths.objectKey(rel)
    throwIfAborted(signal, 'write')
    const put = await this.#put(op, { ifMatch: this.#ctx.ifMatch(version) })
    const revision = put.ok ? put.revision : await afterConflict(store, put, { key, opId: op.id, basis: version, verb: 'write', path })
    if (!('lost' in revision)) return { created: false, version: versionOf(revision), before: null }
    if (revision.lost === undefined) await this.#assertCreatable(rel, path, signal)
    throw FsError.stale('write', path, revision.lost === undefined ? 'gone' : 'changed')
  }

  /**
   * GET (or HEAD), the checks of a create where nothing was there, the guard, then the PUT. `early`:
   * the GET was sent before the lock was held (see {@link early}), so the PUT is pinned to what it
   * found (`If-Match` of its ETag, `If-None-Match: *` where there was nothing): a write that another
   * writer overtook meanwhile changes nothing, and is done again from a fresh GET (a guarded one is
   * stale: the version it found was not the one it expected, or changed since).
   */
  async #replace(op: Op, early?: Promise<Fetched | undefined>): Promise<WriteResult> {
    const { rel, path, request, probe } = op
    const { expected, signal } = request
    const { store, paths } = this.#ctx
    const key = paths.objectKey(rel)
    const current = await (early ?? this.#current(rel, path, request))
    if (current === undefined) await this.#assertCreatable(rel, path, signal)
    checkGuard('write', path, expected, current && versionOf(current.revision))
    throwIfAborted(signal, 'write')
    const pinned = expected !== undefined || early !== undefined
    const conditions: PutConditions | undefined =
      current === undefined
        ? early !== undefined
          ? { ifNoneMatch: '*' as const }
          : undefined
        : pinned && probe.replaceIfVersion
          ? { ifMatch: this.#ctx.ifMatch(current.revision.etag) }
          : undefined
    const put = await this.#put(op, conditions)
    const basis = current && versionOf(current.revision)
    // Unconditional, this PUT fails as a PutConflict only after a lost answer: `afterConflict` then never says `lost`.
    const revision = put.ok ? put.revision : await afterConflict(store, put, { key, opId: op.id, basis, verb: 'write', path })
    if ('lost' in revision) {
      if (expected !== undefined) throw FsError.stale('write', path, 'changed')
      return this.#replace({ ...op, id: newOpId() })
    }
    return { created: current === undefined, version: versionOf(revision), before: current?.bytes ?? null }
  }

  /** The object now: GET with its content as the `before` (up to `beforeMaxBytes`), or a HEAD when nobody wants it. */
  async #current(rel: string, path: string, { signal, beforeMaxBytes }: WriteRequest): Promise<Fetched | undefined> {
    if (beforeMaxBytes === 0) {
      const revision = await this.#ctx.store.head(this.#ctx.paths.objectKey(rel), signal)
      return revision && { revision, bytes: null }
    }
    // The diff basis is decoded into one string: never read more than one can hold.
    const basisMaxBytes = Math.min(beforeMaxBytes, bufferConstants.MAX_STRING_LENGTH)
    return this.#ctx.fetch(rel, { verb: 'write', path, signal }, ({ size }) => size <= basisMaxBytes)
  }

  /**
   * Refuses to create an object at `rel` where a file lies on the path (`FS_NOT_FOUND`: the target
   * was resolved earlier, a parent may have become a file since) or keys lie below it (a directory:
   * `FS_NOT_REGULAR_FILE`). Both asked of the store now, together.
   */
  async #assertCreatable(rel: string, path: string, signal: AbortSignal | undefined): Promise<void> {
    const [underFile, isDirectory] = await Promise.all([this.#ctx.underFile(rel, signal), this.#ctx.isDirectory(rel, signal)])
    if (underFile) throw FsError.throughFile('write', path)
    if (isDirectory) throw FsError.notRegularFile('write', path)
  }
}

/**
 * An unguarded edit that keeps losing conditional PUTs to other clients (edits in this process
 * wait for each other and never race) is redone on the new content, with jittered backoff,
 * until this much time has passed since its first attempt; then it fails `FS_IO_ERROR`
 * (retryable), never `FS_STALE_VERSION`: nobody asked it to be guarded.
 */
export const EDIT_RETRY_MS = 30_000
const EDIT_BACKOFF_MS = { first: 20, max: 1_000 }

/** Waits before an edit's next attempt, or refuses when the retry time ({@link EDIT_RETRY_MS}) is spent. */
export async function editBackoff(attempt: number, deadline: number, path: string, signal: AbortSignal | undefined): Promise<void> {
  const ceiling = Math.min(EDIT_BACKOFF_MS.max, EDIT_BACKOFF_MS.first * 2 ** Math.min(attempt - 1, 16))
  const delay = Math.random() * ceiling
  if (Date.now() + delay >= deadline) {
    throw FsError.io('edit', path, `other clients kept changing the file for ${EDIT_RETRY_MS / 1000} s`, { retryable: true })
  }
  await sleep(delay, undefined, signal === undefined ? {} : { signal }).catch(() => undefined)
  throwIfAborted(signal, 'edit')
}
