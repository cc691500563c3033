import { S3Client } from '@aws-sdk/client-s3'
import {
  checkGuard,
  FileSystem,
  FsError,
  FsVersion,
  processWide,
  throwIfAborted,
  type ByteChunks,
  type ErrorRow,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type FsWriteIntent,
  type LeaseHold,
  type LeaseLocks,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type TreePages,
  type TreeRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { bodyChunks, readBody, type ReadFor } from './body.js'
import { ClearPaths } from './clear-paths.js'
import { s3ErrorRow, toDefiniteFsError } from './errors.js'
import { leaseOptionsOf, s3LeaseLocks, type LeaseTuning } from './leases.js'
import { GATES, LOCKS, withLocks, type LockContext } from './locks.js'
import { DIRECTORY_VERSION, Moves, serverArbitratesMoves } from './moves.js'
import { DEFAULT_PAGE_SIZE, DEFAULT_RESOLVE_CACHE_MS, type S3FileSystemOptions, type S3MoveProbeResult, type S3ProbeResult } from './options.js'
import { normalizePrefix, Paths } from './paths.js'
import { probeConditions, probeMoves, scratchKey } from './probe.js'
import { capabilitiesOf, clientConfig, requestOptionsOf } from './setup.js'
import { underFile } from './under-file.js'
import { listSubtree } from './subtree.js'
import { Store } from './store.js'
import { keyFits, MAX_KEY_BYTES, newOpId, versionOf, type Revision } from './revisions.js'
import { afterConflict, EDIT_RETRY_MS, editBackoff, opMetadata, Writes, type Fetched } from './writes.js'

/**
 * Keys (`bucket \0 object key`) with a write or edit of this process under way, by count (every
 * instance, every copy of this package): such a key's next operation sends nothing before its lock.
 */
const ACTIVE_KEYS: Map<string, number> = processWide('backend-s3:active-keys', () => new Map<string, number>())

/** A listed name a path can reach: not empty, `.` or `..`. */
const isEntryName = (name: string): boolean => name !== '' && name !== '.' && name !== '..'

/** One edit: the file (`rel`; `path` for the errors), the request, its transform, and the probe it goes by. */
interface Edit {
  readonly rel: string
  readonly path: string
  readonly request: UpdateRequest
  readonly transform: (bytes: Uint8Array) => Uint8Array
  readonly probe: S3ProbeResult
}

/**
 * The seamfs contract over an S3 bucket (any S3-compatible server), scoped to a key prefix.
 *
 * Files are objects; directories are key prefixes. `createDirectory` leaves a zero-byte `dir/`
 * marker, which keeps the directory while it holds nothing else (the parent lists it, its own
 * listing never shows the marker); a directory with no marker exists while a key lies below it.
 * `mtime` is Last-Modified in whole seconds (a directory's: its first key's, its marker's).
 * Versions are revisions: the ETag, plus the VersionId in a versioned bucket. A write is one
 * PUT, atomic for every reader. Guards are request conditions (`If-None-Match: *`,
 * `If-Match`) when the server enforces them; a probe on first use (or {@link probe}) finds out,
 * and `capabilities` says `'atomic'` only for the conditions it saw enforced. Otherwise guarded
 * writes are checked under a per-key lock inside this process (`'process'`), or refused with
 * `FS_UNSUPPORTED` when `requireAtomicGuards` is set.
 *
 * Cross-process locks (`leases.ts`): where the probe found lock objects can be made
 * (`S3ProbeResult.lockObjects`), every write, edit, remove and rename holds the lock object of
 * each key it changes (after the key's in-process lock), so the check-then-DELETE of removes and
 * renames, which radosgw cannot make conditional, holds among every seamfs writer in any process
 * (`removeIfVersion: 'seamfs'`). The rule everywhere: nothing is removed, truncated or undone that
 * this operation cannot prove it made (its operation id, `x-amz-meta-seamfs-op`), and an unversioned
 * object only while holding its key's lock object.
 *
 * Request costs (after the probe): stat of a file 1 HEAD (of a directory HEAD + LIST);
 * read 1 GET (`openFile` too: the GET's headers are its info); write 1 GET (the `before` diff basis, which also tells create from update; a HEAD
 * when `before` is not wanted) + 1 PUT, plus on a create 1 LIST (is the target a directory?) and
 * the path check of resolve (did a parent become a file since?), in parallel; `createIfAbsent`
 * 1 LIST + that check + 1 PUT; `replaceIfVersion` without `before` 1 PUT `If-Match` (see
 * `writes.ts`); edit 1 GET + 1 PUT; listDir ⌈entries / pageSize⌉ LISTs; listTree ⌈keys / pageSize⌉ LISTs
 * whatever the depth, the first with a HEAD (`subtree.ts`); resolve, to refuse a path
 * through a file, nothing in a directory it checked less than `resolveCacheMs` ago (see
 * `clear-paths.ts`), else 1 HEAD per ancestor directory up to two, deeper 1 LIST + 1 HEAD when the
 * parent exists, else one LIST more per halving of the depth and at most 2 HEADs. An
 * object above `maxTextBytes` is refused on the GET's headers: its body is released unread.
 * Edits of one key wait for each other in this process (a process-wide lock), so only other
 * clients can make an unguarded edit redo its work.
 *
 * `remove`, `rename` (`'copy'`: CopyObject, then a guarded DELETE of the source; never a moment
 * where neither name holds the file) and `createDirectory` are in `moves.ts`, with what happens
 * when a source changes mid-rename; a second probe ({@link probeMoves}) on the first of them
 * finds which copy and delete conditions the server enforces. Those it does not (radosgw 16:
 * `If-Match` on DELETE, destination conditions on CopyObject) are checked under the keys' locks
 * (lock objects where used), which writes respect too. Costs: remove of a file 1 HEAD + 1 DELETE;
 * of an empty directory + 1 LIST; recursive ⌈keys / pageSize⌉ LISTs + ⌈keys / 1000⌉ DeleteObjects;
 * createDirectory 1 HEAD + 1 LIST + the path check, then 1 PUT; rename 3 HEAD + 1 LIST + the path
 * check of `to` + 1 COPY + 1 DELETE.
 * Lock objects add 1 PUT before and 1 DELETE after, per key a write, edit, remove or rename changes.
 * A write or edit sends its first requests (the GET, a create's checks) together with its lock
 * object's PUT, its PUT then conditional on what the GET found (`If-Match`, `If-None-Match: *`), so
 * the lock costs no round trip of its own; its DELETE goes behind the answer (see {@link settle}).
 * Through the tools (sandbox, read-before-write policy) that makes a read 1 round trip, and a write
 * of a new file (its checks, then the PUT), an overwrite after a read and an edit (the GET, then the
 * PUT) 2 each, lock objects or not.
 */
export class S3FileSystem extends FileSystem {
  readonly client: S3Client
  readonly bucket: string
  /** The normalized key prefix (`a/b/`, or `''` for the whole bucket). */
  readonly prefix: string
  readonly cwd: string
  readonly #paths: Paths
  readonly #store: Store
  readonly #ownsClient: boolean
  readonly #requireAtomic: boolean
  #capabilities: FsCapabilities = capabilitiesOf(undefined)
  #probe: Promise<S3ProbeResult> | undefined
  #probed: S3ProbeResult | undefined
  #moveProbe: Promise<S3MoveProbeResult> | undefined
  #moveProbed: S3MoveProbeResult | undefined
  readonly #moves: Moves
  readonly #writes: Writes
  readonly #clearPaths: ClearPaths
  readonly #lease: LeaseTuning
  /** The lock objects, once the probe found they can be made (see `leases.ts`). */
  #leases: LeaseLocks | undefined
  #closed = false
  /** Writes and edits that answered and are still releasing their lock objects ({@link #lockedAnswerFirst}). */
  readonly #releasing = new Set<Promise<unknown>>()

  /** Builds the filesystem and runs the capability probe, so `capabilities` is final. */
  static async open(options: Readonly<S3FileSystemOptions>): Promise<S3FileSystem> {
    const fs = new S3FileSystem(options)
    try {
      await fs.probe()
    } catch (err) {
      await fs.close()
      throw err
    }
    return fs
  }

  constructor(options: Readonly<S3FileSystemOptions>) {
    super(options)
    if (typeof options.bucket !== 'string' || options.bucket === '') throw new TypeError('bucket must be a non-empty string')
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new RangeError('pageSize must be an integer within 1..1000')
    this.bucket = options.bucket
    this.prefix = normalizePrefix(options.prefix)
    this.#paths = new Paths(this.bucket, this.prefix, options.cwd)
    this.cwd = this.#paths.cwd
    const requests = requestOptionsOf(options)
    this.client = options.client ?? new S3Client(clientConfig(options))
    this.#ownsClient = options.client === undefined
    // An injected client keeps its own deadlines: only a client built here has these.
    this.#store = new Store(this.client, this.bucket, pageSize, this.#ownsClient ? requests : undefined)
    this.#requireAtomic = options.requireAtomicGuards ?? false
    const cacheMs = options.resolveCacheMs ?? DEFAULT_RESOLVE_CACHE_MS
    if (!Number.isSafeInteger(cacheMs) || cacheMs < 0) throw new RangeError('resolveCacheMs must be a non-negative integer')
    this.#clearPaths = new ClearPaths(cacheMs)
    this.#lease = leaseOptionsOf(options)
    this.#writes = new Writes({
      paths: this.#paths,
      store: this.#store,
      underFile: (rel, signal) => this.#underFile(rel, signal),
      isDirectory: (rel, signal) => this.#isDirectory(rel, signal),
      fetch: (rel, op, wanted) => this.#fetch(rel, op, wanted),
      ifMatch: (etag) => this.#ifMatch(etag),
      writing: (rel, put) => this.#clearPaths.writing(rel, put),
    })
    this.#moves = new Moves({
      paths: this.#paths,
      store: this.#store,
      probe: () => this.probe(),
      probeMoves: () => this.probeMoves(),
      underFile: (rel, signal) => this.#underFile(rel, signal),
      locked: (rels, ctx, fn) => this.#locked(rels, true, ctx, fn),
      ifMatch: (etag) => this.#ifMatch(etag),
      requireAtomic: this.#requireAtomic,
    })
  }

  /** Conservative (`'process'` guards) until the probe has run; then what the probe found. */
  override get capabilities(): FsCapabilities {
    return this.#capabilities
  }

  /** What the probe found, once it has run. */
  get probeResult(): S3ProbeResult | undefined {
    return this.#probed
  }

  /**
   * Probes, once, on a scratch key under the prefix, which write conditions the server
   * enforces (see {@link S3ProbeResult}); writes and edits call it on first use. A failed
   * probe is not remembered: the next call tries again.
   */
  probe(): Promise<S3ProbeResult> {
    this.#probe ??= probeConditions(this.#store, scratchKey(this.prefix)).then(
      (result) => {
        this.#probed = result
        this.#capabilities = capabilitiesOf(result)
        this.#leases ??= result.lockObjects
          ? s3LeaseLocks(
              this.#store,
              this.#lease,
              (etag) => this.#ifMatch(etag),
              () => this.#moveProbed?.deleteIfMatch === true,
            )
          : undefined
        return result
      },
      (err: unknown) => {
        this.#probe = undefined
        // Scratch keys only: whatever its requests did, the probe changed nothing of the caller's.
        throw toDefiniteFsError(err, 'write', '/')
      },
    )
    return this.#probe
  }

  /** What the second probe found, once a `remove` or `rename` has run it. */
  get moveProbeResult(): S3MoveProbeResult | undefined {
    return this.#moveProbed
  }

  /**
   * The second probe, once, on scratch keys under the prefix (see {@link S3MoveProbeResult}):
   * which conditions CopyObject and DeleteObject enforce. The first `remove` or `rename` runs
   * it; it changes no capability, only which guards are request conditions and which are
   * checked under the process-wide lock. A failed probe is tried again on next use.
   */
  probeMoves(): Promise<S3MoveProbeResult> {
    this.#moveProbe ??= this.probe()
      .then((conditions) => probeMoves(this.#store, scratchKey(this.prefix), conditions.ifMatchForm))
      .then(
        (result) => {
          this.#moveProbed = result
          return result
        },
        (err: unknown) => {
          this.#moveProbe = undefined
          throw toDefiniteFsError(err, 'write', '/')
        },
      )
    return this.#moveProbe
  }

  /**
   * Resolves once every lock object this filesystem released behind an answer is gone (a write or
   * an edit answers as soon as its PUT has, and releases its lock object after): for a caller that
   * must know the store is quiet, as `close()` does before it ends the client.
   */
  async settle(): Promise<void> {
    while (this.#releasing.size > 0) await Promise.allSettled([...this.#releasing])
  }

  override async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Lock objects still being released behind an answer go first.
    await this.settle()
    if (this.#ownsClient) this.client.destroy()
  }

  override fileUrl(target: FsTarget): string {
    return this.#paths.url(this.#paths.relOf(target, 'resolve'))
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return Paths.contains(parent, child)
  }

  protected override errorRow(err: unknown): ErrorRow {
    return s3ErrorRow(err, this.#store.deadlines)
  }

  protected override async resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    const abs = this.#paths.absolute(path, cwd)
    const rel = abs.slice(1)
    const parent = rel.slice(0, Math.max(rel.lastIndexOf('/'), 0))
    if (parent !== '' && this.#clearPaths.has(parent)) return this.#paths.target(rel)
    if (await this.#underFile(rel, signal)) throw FsError.throughFile('resolve', abs)
    return this.#paths.target(rel)
  }

  protected override statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return this.#info(this.#paths.relOf(target, 'stat'), signal)
  }

  protected override lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    return this.#info(this.#paths.absolute(path, cwd).slice(1), signal)
  }

  protected override async loadBytes(target: FsTarget, { signal, maxBytes }: ReadRequest): Promise<Uint8Array> {
    const path = target.displayPath
    const rel = this.#fileRel(target, 'read')
    const found = await this.#fetch(rel, { verb: 'read', path, signal }, ({ size }) => {
      if (size > maxBytes) throw FsError.tooLarge('read', path, size, maxBytes)
      return true
    })
    if (found === undefined) throw await this.#absent(rel, 'read', path, signal)
    return found.bytes ?? new Uint8Array(0)
  }

  protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    const rel = this.#fileRel(target, 'read')
    const opened = await this.#store.open(this.#paths.objectKey(rel), signal)
    if (opened === undefined) throw await this.#absent(rel, 'read', target.displayPath, signal)
    return bodyChunks(opened.body, opened.revision.size, target.displayPath, signal)
  }

  /** One GET: its headers are the info (size, the ETag's version, Last-Modified), its body the chunks. */
  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const rel = this.#fileRel(target, 'read')
    const opened = await this.#store.open(this.#paths.objectKey(rel), signal)
    if (opened === undefined) throw await this.#absent(rel, 'read', target.displayPath, signal)
    const { revision, body } = opened
    const { size, lastModified } = revision
    const info: FsInfo = { type: 'file', version: versionOf(revision), size, ...(lastModified === undefined ? {} : { mtime: lastModified }) }
    return { info, chunks: bodyChunks(body, size, target.displayPath, signal) }
  }

  /** `listTree`: one LIST without a delimiter, paginated, whatever the depth (subtree.ts). */
  protected override listSubtree(target: FsTarget, request: TreeRequest): Promise<TreePages> {
    return listSubtree({ paths: this.#paths, store: this.#store, withVersion: this.#probed?.versioned === false }, target, request)
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const path = target.displayPath
    const rel = this.#paths.relOf(target, 'list')
    const childRel = (name: string): string => (rel === '' ? name : `${rel}/${name}`)
    // ListObjectsV2 carries no VersionId: the ETag alone is the version only in an unversioned bucket.
    const withVersion = this.#probed?.versioned === false
    const files = new Map<string, FsDirEntry>()
    const dirs = new Set<string>()
    let exists = rel === ''
    for await (const page of this.#store.list(this.#paths.childPrefix(rel), path, signal)) {
      exists ||= page.files.length > 0 || page.dirs.length > 0
      // An empty name is the directory's own marker or an empty segment (`a//b`); `.` and `..` come only from
      // keys written by other tools (`a/../b`). No path reaches such a key, and shown it would name another place.
      for (const f of page.files) {
        if (!isEntryName(f.name)) continue
        files.set(f.name, {
          name: f.name,
          type: 'file',
          target: this.#paths.target(childRel(f.name)),
          ...(f.size === undefined ? {} : { size: f.size }),
          ...(f.lastModified === undefined ? {} : { mtime: f.lastModified }),
          ...(withVersion && f.etag !== undefined ? { version: FsVersion(f.etag) } : {}),
        })
      }
      for (const d of page.dirs) if (isEntryName(d)) dirs.add(d)
    }
    if (!exists) {
      const file = await this.#store.head(this.#paths.objectKey(rel), signal)
      throw file === undefined ? FsError.notFound('list', path) : FsError.notDirectory('list', path)
    }
    const entries = [...files.values()]
    // A key that is both an object and a prefix is shown as the file (stat and resolve agree).
    for (const name of dirs) {
      if (!files.has(name)) entries.push({ name, type: 'directory', target: this.#paths.target(childRel(name)) })
    }
    return entries
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const path = target.displayPath
    const rel = this.#fileRel(target, 'write')
    if (!keyFits(this.#paths.objectKey(rel))) throw FsError.io('write', path, `the object key would be longer than ${MAX_KEY_BYTES} bytes, the S3 limit`)
    const probe = await this.probe()
    const { expected } = request
    if (expected !== undefined && !probe[expected.kind]) this.#assertFallbackAllowed(expected.kind, 'write', path)
    const job = { rel, path, bytes, request, probe }
    if (this.#activeLeases() === undefined) return this.#serialized(rel, probe, (hold?: LeaseHold) => this.#writes.write(job, hold))
    // The reads the write needs go with the lock object's PUT (the PUT that writes waits for both).
    return this.#lockedAnswerFirst(
      rel,
      { verb: 'write', path, signal: request.signal },
      () => this.#writes.early(job),
      (hold, early) => this.#writes.write(job, hold, early),
    )
  }

  /** Writes and edits take a layer's fence: their reads (and lock object) go with it, their PUT waits for it. */
  protected override takesFence(): boolean {
    return true
  }

  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return this.#forgettingPaths(() => this.#moves.remove(target, request))
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return this.#forgettingPaths(() => this.#moves.rename(from, to, request))
  }

  /** A remove or rename can make a directory vanish or put a file on a path: resolve's memory is dropped before and after it. */
  async #forgettingPaths<T>(fn: () => Promise<T>): Promise<T> {
    this.#clearPaths.clear()
    try {
      return await fn()
    } finally {
      this.#clearPaths.clear()
    }
  }

  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#moves.makeDirectory(target, signal)
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const path = target.displayPath
    const rel = this.#fileRel(target, 'edit')
    const probe = await this.probe()
    if (request.expected !== undefined && !probe.replaceIfVersion) this.#assertFallbackAllowed('replaceIfVersion', 'edit', path)
    const edit = { rel, path, request, transform, probe }
    // Edits of one key always wait for each other in this process, so they never race here. Where lock
    // objects are used, the edit's first GET goes with the lock object's PUT: its PUT is conditional
    // (If-Match of what it read) wherever the server enforces that, so it never lands on other content.
    const early = (): Promise<Fetched | undefined> | undefined => {
      if (this.#activeLeases() === undefined || !probe.replaceIfVersion) return undefined
      const read = this.#editRead(edit)
      read.catch(() => undefined)
      return read
    }
    return this.#lockedAnswerFirst(rel, { verb: 'edit', path, signal: request.signal }, early, (hold, read) => this.#update(edit, hold, read))
  }

  /** The GET of an edit: the guard and the size checked on its headers, before its body is read. */
  #editRead({ rel, path, request }: Edit): Promise<Fetched | undefined> {
    const { expected, signal, maxBytes } = request
    return this.#fetch(rel, { verb: 'edit', path, signal }, (revision) => {
      checkGuard('edit', path, expected, versionOf(revision))
      if (revision.size > maxBytes) throw FsError.tooLarge('edit', path, revision.size, maxBytes)
      return true
    })
  }

  /** One edit, holding `hold` (the key's lock object, where those are used): GET, transform, conditional PUT, redone where an unguarded edit lost a race. */
  async #update(edit: Edit, hold: LeaseHold | undefined, early?: Promise<Fetched | undefined>): Promise<FsVersion> {
    const { rel, path, transform, probe } = edit
    const { expected, signal } = edit.request
    const key = this.#paths.objectKey(rel)
    const deadline = Date.now() + EDIT_RETRY_MS
    for (let attempt = 1; ; attempt++) {
      // The guard and the size are checked on the GET's headers, before its body is read.
      const current = await (attempt === 1 && early !== undefined ? early : this.#editRead(edit))
      if (current === undefined) {
        if (await this.#isDirectory(rel, signal)) throw FsError.notRegularFile('edit', path)
        throw FsError.stale('edit', path, 'gone')
      }
      const bytes = transform(current.bytes ?? new Uint8Array(0))
      throwIfAborted(signal, 'edit')
      const conditions = probe.replaceIfVersion ? { ifMatch: this.#ifMatch(current.revision.etag) } : undefined
      const opId = newOpId()
      // A layer's fence (`UpdateRequest.fence`) allows the PUT: the GET went with the fence's own requests.
      await edit.request.fence
      throwIfAborted(signal, 'edit')
      hold?.assertHeld('edit', path)
      const put = await this.#clearPaths.writing(rel, () => this.#store.put(key, bytes, { ...conditions, metadata: opMetadata(opId) }))
      const failed = { key, opId, basis: versionOf(current.revision), verb: 'edit', path } as const
      const revision = put.ok ? put.revision : await afterConflict(this.#store, put, failed)
      if (!('lost' in revision)) return versionOf(revision)
      // An unguarded edit that lost a race to another client is redone on the new content; a guarded one is stale.
      if (expected !== undefined) throw FsError.stale('edit', path, 'changed')
      // A read sent before the lock that was overtaken is done again at once: the lock is held now.
      if (attempt > 1 || early === undefined) await editBackoff(attempt, deadline, path, signal)
    }
  }

  /**
   * {@link #locked}, answering as soon as `fn` has: the lock objects are released behind the
   * answer, still under this process's locks (the next operation on those keys here waits for the
   * release, not for a poll of the store), and `close()` waits for them.
   */
  #lockedAnswerFirst<T, E>(rel: string, ctx: LockContext, early: () => E, fn: (hold: LeaseHold | undefined, early: E | undefined) => Promise<T>): Promise<T> {
    // The reads that may go before the lock (`early`) are sent only while no other operation of this
    // process is at the key: behind one, what they read would be overtaken before the lock is had.
    const key = this.#lockKey(rel)
    const busy = ACTIVE_KEYS.get(key) ?? 0
    ACTIVE_KEYS.set(key, busy + 1)
    const sent = busy === 0 ? early() : undefined
    return new Promise<T>((resolve, reject) => {
      const whole = this.#locked([rel], false, ctx, async (hold) => {
        const value = await fn(hold, sent)
        resolve(value)
        return value
      })
      this.#releasing.add(whole)
      const done = (): void => {
        this.#releasing.delete(whole)
        const left = (ACTIVE_KEYS.get(key) ?? 1) - 1
        if (left > 0) ACTIVE_KEYS.set(key, left)
        else ACTIVE_KEYS.delete(key)
      }
      whole.then(done, (err: unknown) => {
        done()
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the operation's own failure, passed on untouched: core translates it
        reject(err)
      })
    })
  }

  /**
   * Runs `fn` under the process-wide lock of the key, or, where the server enforces both
   * conditions, holding only the key's gate shared: such writes race each other at the server,
   * but never land between a remove's or rename's check and its unconditional DELETE.
   */
  #serialized<T>(rel: string, probe: S3ProbeResult, fn: () => Promise<T>): Promise<T> {
    if (probe.createIfAbsent && probe.replaceIfVersion) return GATES.shared(this.#lockKey(rel), fn)
    return LOCKS.run(this.#lockKey(rel), fn)
  }

  #lockKey(rel: string): string {
    return `${this.bucket}\0${this.#paths.objectKey(rel)}`
  }

  /**
   * Runs `fn` holding the locks of `rels`: in this process (`exclusive`: the gates too), then
   * their lock objects where they are in use ({@link withLocks}).
   */
  #locked<T>(rels: readonly string[], exclusive: boolean, ctx: LockContext, fn: (hold: LeaseHold | undefined) => Promise<T>): Promise<T> {
    const keys = rels.map((rel) => ({ local: this.#lockKey(rel), object: this.#paths.objectKey(rel) }))
    return withLocks(keys, { exclusive, leases: this.#activeLeases() }, ctx, fn)
  }

  /** The lock objects, unless the server enforces every condition of removes and renames (then nobody needs them). */
  #activeLeases(): LeaseLocks | undefined {
    const [probe, moves] = [this.#probed, this.#moveProbed]
    return probe !== undefined && moves !== undefined && serverArbitratesMoves(probe, moves) ? undefined : this.#leases
  }

  /** Whether a file lies on the path to `rel` (see {@link underFile}), asked of the store; a clear answer is remembered for `resolve`. */
  async #underFile(rel: string, signal: AbortSignal | undefined): Promise<boolean> {
    const start = this.#clearPaths.begin()
    const found = await underFile(this.#store, this.#paths, rel, signal)
    const parent = rel.slice(0, Math.max(rel.lastIndexOf('/'), 0))
    // A file on the path: whatever was remembered around it may be stale (another client put it there).
    if (found) this.#clearPaths.clear()
    else if (parent !== '') this.#clearPaths.remember(parent, start)
    return found
  }

  #assertFallbackAllowed(kind: FsWriteIntent['kind'], verb: FsVerb, path: string): void {
    if (!this.#requireAtomic) return
    const header = kind === 'createIfAbsent' ? 'If-None-Match: *' : 'If-Match'
    throw FsError.unsupported(verb, path, `the server does not enforce ${header} and requireAtomicGuards is set`)
  }

  #ifMatch(etag: string): string {
    return this.#probed?.ifMatchForm === 'quoted' ? `"${etag}"` : etag
  }

  /** The relative path of a target that may be a file (the root never is). */
  #fileRel(target: FsTarget, verb: FsVerb): string {
    const rel = this.#paths.relOf(target, verb)
    if (rel === '') throw FsError.notRegularFile(verb, target.displayPath)
    return rel
  }

  async #info(rel: string, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    if (rel === '') return { type: 'directory', version: DIRECTORY_VERSION }
    const revision = await this.#store.head(this.#paths.objectKey(rel), signal)
    if (revision !== undefined) {
      const { size, lastModified } = revision
      return { type: 'file', version: versionOf(revision), size, ...(lastModified === undefined ? {} : { mtime: lastModified }) }
    }
    // A directory's mtime is its first key's: its marker where it has one (`dir/` sorts first).
    const first = await this.#store.firstUnder(this.#paths.childPrefix(rel), signal)
    if (first === undefined) return undefined
    return { type: 'directory', version: DIRECTORY_VERSION, ...(first.lastModified === undefined ? {} : { mtime: first.lastModified }) }
  }

  #isDirectory(rel: string, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#store.hasKeysUnder(this.#paths.childPrefix(rel), signal)
  }

  /** The error for a file that is not there: a directory, or `FS_NOT_FOUND`. */
  async #absent(rel: string, verb: FsVerb, path: string, signal: AbortSignal | undefined): Promise<FsError> {
    return (await this.#isDirectory(rel, signal)) ? FsError.notRegularFile(verb, path) : FsError.notFound(verb, path)
  }

  /**
   * One GET: the revision and the content, or `undefined` when there is no object. `wanted`
   * sees the revision (from the headers) before the body is read: false leaves the content
   * unread (`bytes: null`); it may throw, and the body is then released unread too.
   */
  async #fetch(rel: string, op: ReadFor, wanted: (revision: Revision) => boolean): Promise<Fetched | undefined> {
    const opened = await this.#store.open(this.#paths.objectKey(rel), op.signal)
    if (opened === undefined) return undefined
    const { revision, body } = opened
    return { revision, bytes: await readBody(body, revision.size, op, () => wanted(revision)) }
  }
}
