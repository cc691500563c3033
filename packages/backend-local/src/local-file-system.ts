import {
  accessSync,
  type BigIntStats,
  type Dirent,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  read,
  statSync,
} from 'node:fs'
import { readdir } from 'node:fs/promises'
import { dirname, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  checkGuard,
  lendBytes,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  isFsError,
  KeyedMutex,
  LeaseLocks,
  processWide,
  throwIfAborted,
  type Awaitable,
  type ErrorRow,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type LeaseHold,
  type OpenedFile,
  type LeaseStore,
  type LockContext,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { DESCRIPTOR_PATHS, ensureAnchor, fdPath, openVerified, removeMadeDirectories } from './anchor.js'
import { errnoOf, errnoRow } from './errors.js'
import { DEFAULT_NEW_FILE_MODE, type LocalFileSystemOptions, type LocalHooks } from './options.js'
import { absolutePath, canonicalPath, containsPath, NO_DESCRIPTOR, O_PATH } from './paths.js'
import { makeDirectoryAt, removeEntry } from './mutate.js'
import { isLockName, localLeaseStore } from './leases.js'
import { isStagingName, Publisher } from './publish.js'
import { ReadPool } from './read-pool.js'
import { moveEntry } from './rename.js'
import { assertWritable, infoOf, pathInfoOf, versionOf } from './stats.js'

/** Reads of at most this many bytes are done synchronously (microseconds from the page cache). */
const SYNC_READ_MAX = 64 * 1024
const READ_CHUNK = 1024 * 1024
const STREAM_CHUNK = 256 * 1024
/** The buffers edits read into, shared by every instance in the process (see {@link ReadPool}). */
const readPool = new ReadPool()
/** Opening a FIFO must not block: the type check comes from fstat after open. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK
/**
 * The key of a broken link in a listing: what `resolve` gives its path (a dangling link is followed
 * to the missing path it names, where a write creates the file), or, for a link that does not
 * resolve (a loop, a path through a file), the link's own path.
 */
function brokenKey(childKey: string): string {
  try {
    return canonicalPath(childKey)
  } catch {
    return childKey
  }
}

/** Errnos of a path that can never be followed: for `stat` it is absent, in a listing a broken link. */
const UNFOLLOWABLE = new Set(['ELOOP', 'ENOTDIR', 'ENAMETOOLONG'])

/** stat(2) of `path`, links followed; absent (also through a file or a loop) is undefined. */
function statOrUndefined(path: string): FsInfo | undefined {
  try {
    const st = statSync(path, { bigint: true, throwIfNoEntry: false })
    return st === undefined ? undefined : infoOf(st)
  } catch (err) {
    if (UNFOLLOWABLE.has(errnoOf(err) ?? '')) return undefined
    throw err
  }
}
/** Errnos of an edit target that is gone: the edit is stale, whatever the guard. */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP'])

const LOCAL_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  permissions: true,
  processPath: true,
  createIfAbsent: 'atomic',
  replaceIfVersion: 'seamfs',
  versionSource: 'stat',
  newlineInNames: true,
  emptyDirectories: true,
  remove: true,
  rename: 'atomic',
  renameDirectories: true,
  createDirectory: 'native',
  mtime: true,
  // Every read opens the key and asks the descriptor where it is (`openVerified`); needs descriptor paths.
  keyBoundReads: DESCRIPTOR_PATHS,
})

/** Refuses a write under a reserved name: sweeps remove (and listings hide) them, so a file or directory made under one would be lost. */
function assertWriteName(target: FsTarget): void {
  const reserved = target.targetKey.split(sep).find((name) => isStagingName(name) || isLockName(name))
  if (reserved !== undefined) {
    throw FsError.unsupported('write', target.displayPath, `the name "${reserved}" is reserved for staging directories and lock entries`)
  }
}

/** With `lockScope: 'process'`: no lock entries, guards among this process's callers only. */
const PROCESS_SCOPED_CAPABILITIES: FsCapabilities = Object.freeze({ ...LOCAL_CAPABILITIES, replaceIfVersion: 'process' })

/** The hold of an operation without lock entries (`lockScope: 'process'`): nothing to lose. */
const PROCESS_HOLD: LeaseHold = { assertHeld: () => undefined }

function childPath(parent: string, name: string): string {
  return parent.endsWith(sep) ? parent + name : parent + sep + name
}

function readChunk(fd: number, buffer: Buffer, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, null, (err, bytesRead) => (err === null ? resolve(bytesRead) : reject(err)))
  })
}

/** How much of a descriptor a read takes, and what it is for. */
interface ReadBound {
  /** The size fstat gave: the first buffer's size, and whether the reads are synchronous ({@link SYNC_READ_MAX}). */
  readonly size: number
  /** At most `limit + 1` bytes are read. */
  readonly limit: number
  /** The verb of an abort's error. */
  readonly verb: FsVerb
  readonly signal: AbortSignal | undefined
  /**
   * The bytes go to a caller (`readBytes`): in a buffer of their own, zero-filled past them, not a view
   * of Node's shared pool, whose other bytes (anything this process allocated small) `.buffer` shows.
   */
  readonly own?: boolean | undefined
  /** A buffer to read into (from the edits' {@link ReadPool}) while the file fits it; a file that grew past it is read into one of its own. */
  readonly into?: Buffer | undefined
}

/**
 * Reads an open descriptor to its end (the file may have grown since fstat), but
 * never more than `limit + 1` bytes: a file that grew past `limit` comes back as
 * `limit + 1` bytes, for the caller to refuse. A file fstat found at most
 * {@link SYNC_READ_MAX} bytes is read synchronously ({@link readUpToSync}), and the
 * answer is no promise.
 */
function readUpTo(fd: number, bound: ReadBound): Buffer | Promise<Buffer> {
  return bound.size <= SYNC_READ_MAX ? readUpToSync(fd, bound) : readUpToAsync(fd, bound)
}

/** {@link readUpTo} of a small file: synchronous reads (a trip to the thread pool costs more than the bytes). */
function readUpToSync(fd: number, bound: ReadBound): Buffer {
  const filling = new Filling(bound)
  for (let want = filling.room(); want > 0; want = filling.room()) {
    if (!filling.took(readSync(fd, filling.buffer, filling.length, want, null))) break
  }
  return filling.bytes()
}

async function readUpToAsync(fd: number, bound: ReadBound): Promise<Buffer> {
  const filling = new Filling(bound)
  for (let want = filling.room(); want > 0; want = filling.room()) {
    throwIfAborted(bound.signal, bound.verb)
    if (!filling.took(await readChunk(fd, filling.buffer, filling.length, want))) break
  }
  return filling.bytes()
}

/** The buffer {@link readUpTo} reads into: grown as the file turns out longer, never past `limit + 1` bytes. */
class Filling {
  buffer: Buffer
  length = 0
  readonly #cap: number
  readonly #own: boolean | undefined

  constructor({ size, limit, own, into }: ReadBound) {
    this.#cap = limit + 1
    this.#own = own
    const first = Math.min(size + 1, this.#cap)
    this.buffer = into !== undefined && into.length >= first ? into.subarray(0, first) : allocate(first, own)
  }

  /** How many bytes the next read may take (grown first where full); 0 once `limit + 1` were read. */
  room(): number {
    if (this.length === this.buffer.length) {
      if (this.length === this.#cap) return 0
      const next = allocate(Math.min(this.buffer.length * 2, this.#cap), this.#own)
      this.buffer.copy(next, 0, 0, this.length)
      this.buffer = next
    }
    return Math.min(this.buffer.length - this.length, READ_CHUNK)
  }

  /** Counts a read of `n` bytes; false at the end of the file (`n` is 0). */
  took(n: number): boolean {
    this.length += n
    return n > 0
  }

  /** The bytes read. */
  bytes(): Buffer {
    return this.length === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.length)
  }
}

/** A buffer for a read: of its own where it goes to a caller ({@link ReadBound.own}), else possibly from the pool. */
function allocate(size: number, own: boolean | undefined): Buffer {
  return own === true ? Buffer.alloc(size) : Buffer.allocUnsafe(size)
}

/** A read of a whole file: its `limit`, the verb and path of its errors, and its signal. */
interface WholeRead {
  readonly limit: number
  readonly verb: 'read' | 'edit'
  readonly path: string
  readonly signal: AbortSignal | undefined
  /** See {@link ReadBound.own}. */
  readonly own?: boolean | undefined
  /** See {@link ReadBound.into}. */
  readonly into?: Buffer | undefined
}

/** The content behind `fd` (of stat `st`): above `limit` it is refused before a byte is read, or once it grows past it. */
function readWhole(fd: number, st: BigIntStats, { limit, verb, path, signal, own, into }: WholeRead): Buffer | Promise<Buffer> {
  if (st.size > BigInt(limit)) throw FsError.tooLarge(verb, path, Number(st.size), limit)
  const within = (bytes: Buffer): Buffer => {
    if (bytes.length > limit) throw FsError.tooLarge(verb, path, bytes.length, limit)
    return bytes
  }
  const bytes = readUpTo(fd, { size: Number(st.size), limit, verb, signal, own, into })
  return bytes instanceof Promise ? bytes.then(within) : within(bytes)
}

/** The entries of `target`'s directory, read through a descriptor verified at its canonical path. */
async function readdirVerified(target: FsTarget): Promise<Dirent[]> {
  if (!DESCRIPTOR_PATHS) return readdir(target.targetKey, { withFileTypes: true })
  const fd = openVerified(target.targetKey, constants.O_RDONLY | constants.O_DIRECTORY, 'list', target.displayPath)
  try {
    return await readdir(fdPath(fd), { withFileTypes: true })
  } finally {
    closeSync(fd)
  }
}

/**
 * The host disk behind the seamfs contract. Writes are atomic and durable
 * (staging directory, fsync, rename, directory fsync); guarded creates are
 * atomic across processes (hard link); version guards are checked under a
 * per-target lock inside this process. Metadata syscalls are synchronous
 * (microseconds on a local disk); data transfer and fsync are asynchronous.
 */
export class LocalFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities
  readonly cwd: string
  readonly #newFileMode: number
  readonly #hooks: LocalHooks | undefined
  /** Per-target locks, shared by every instance in the process: `replaceIfVersion` is `'process'`. */
  readonly #locks: KeyedMutex = processWide('backend-local:locks', () => new KeyedMutex())
  /** Lock entries in the store: guards hold among every seamfs writer of this disk, in any process (`'seamfs'`); none with `lockScope: 'process'`. */
  readonly #leases: LeaseLocks | undefined
  readonly #publisher = new Publisher()

  constructor(options: Readonly<LocalFileSystemOptions> = {}) {
    super(options)
    const scope = options.lockScope ?? 'store'
    if (scope !== 'store' && scope !== 'process') throw new RangeError("lockScope must be 'store' or 'process'")
    // Lock entries come and go in the target's directory: the publisher is told, so its residue sweep does not take them for someone else's.
    const own = <T>(key: string, change: () => T): T => this.#publisher.own(dirname(key), change)
    const store: LeaseStore = {
      ...localLeaseStore,
      create: (key, text, signal) => own(key, () => localLeaseStore.create(key, text, signal)),
      remove: (key, token) => own(key, () => localLeaseStore.remove(key, token)),
    }
    this.#leases = scope === 'store' ? new LeaseLocks(store, { leaseMs: options.lockLeaseMs, maxWaitMs: options.lockWaitMs }) : undefined
    this.capabilities = scope === 'store' ? LOCAL_CAPABILITIES : PROCESS_SCOPED_CAPABILITIES
    this.cwd = absolutePath(options.cwd ?? process.cwd(), process.cwd())
    const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
    this.#newFileMode = mode
    this.#hooks = options.hooks
  }

  /** Removes this filesystem's idle staging directories now (they otherwise go after a second of quiet). */
  override async close(): Promise<void> {
    this.#publisher.flush()
  }

  override fileUrl(target: FsTarget): string {
    return pathToFileURL(target.targetKey).href
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return containsPath(parent.targetKey, child.targetKey)
  }

  protected override processPathOf(target: FsTarget): string {
    return target.targetKey
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    return errnoRow(err)
  }

  protected override resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget> {
    const abs = this.#absolute(path, cwd)
    return { targetKey: FsTargetKey(canonicalPath(abs)), displayPath: abs }
  }

  /**
   * The metadata of what the key names now, through a descriptor verified at the key (`O_PATH`: nothing
   * is opened for I/O), so that a directory swapped for a link on the way fails the call instead of
   * describing what the link leads to (a file outside a sandbox's roots).
   */
  protected override statTarget(target: FsTarget): Awaitable<FsInfo | undefined> {
    let fd: number
    try {
      if (!DESCRIPTOR_PATHS) return statOrUndefined(target.targetKey)
      fd = openVerified(target.targetKey, O_PATH, 'stat', target.displayPath)
    } catch (err) {
      const code = errnoOf(err) ?? ''
      if (code === 'ENOENT' || UNFOLLOWABLE.has(code)) return undefined
      if (NO_DESCRIPTOR.has(code)) return statOrUndefined(target.targetKey)
      throw err
    }
    try {
      return infoOf(fstatSync(fd, { bigint: true }))
    } finally {
      closeSync(fd)
    }
  }

  // A path through a file (ENOTDIR) or a link loop (ELOOP) is FS_NOT_FOUND in the table: core reports it absent.
  protected override lstatPath(path: string, cwd: string | undefined): Awaitable<FsPathInfo | undefined> {
    const st = lstatSync(this.#absolute(path, cwd), { bigint: true, throwIfNoEntry: false })
    return st === undefined ? undefined : pathInfoOf(st)
  }

  /** A small file is read synchronously: the answer is no promise. */
  protected override loadBytes(target: FsTarget, { signal, maxBytes, transient }: ReadRequest): Awaitable<Uint8Array> {
    const fd = openVerified(target.targetKey, READ_FLAGS, 'read', target.displayPath)
    let owned = true
    try {
      const st = fstatSync(fd, { bigint: true })
      if (!st.isFile()) throw FsError.notRegularFile('read', target.displayPath)
      const bytes = readWhole(fd, st, { limit: maxBytes, verb: 'read', path: target.displayPath, signal, own: transient !== true })
      if (!(bytes instanceof Promise)) return bytes
      owned = false
      return bytes.finally(() => closeSync(fd))
    } finally {
      if (owned) closeSync(fd)
    }
  }

  protected override async openBytes(target: FsTarget): Promise<AsyncIterable<Uint8Array>> {
    if (!statSync(target.targetKey).isFile()) throw FsError.notRegularFile('read', target.displayPath)
    accessSync(target.targetKey, constants.R_OK)
    // The descriptor is opened on first iteration, so an iterable that is never consumed holds nothing.
    return streamFile(target)
  }

  /**
   * One descriptor: opened (verified at the canonical path), fstat-ed for the info, and, for a file
   * of at most {@link SYNC_READ_MAX} bytes, read whole at once (one chunk, no second trip to the
   * disk); a larger one is streamed from that descriptor.
   */
  protected override openTarget(target: FsTarget, _signal?: AbortSignal): Awaitable<OpenedFile> {
    const fd = openVerified(target.targetKey, READ_FLAGS, 'read', target.displayPath)
    let owned = true
    try {
      const st = fstatSync(fd, { bigint: true })
      if (!st.isFile()) throw FsError.notRegularFile('read', target.displayPath)
      const info = infoOf(st)
      if (st.size > BigInt(SYNC_READ_MAX)) {
        owned = false
        return { info, chunks: streamFrom(fd) }
      }
      // The file may have grown since fstat: read on to its end, as a stream would (past a bound, streamed).
      // Synchronous: the answer is no promise, so core has nothing to wait on.
      const limit = 4 * SYNC_READ_MAX
      const bytes = readUpToSync(fd, { size: Number(st.size), limit, verb: 'read', signal: undefined })
      if (bytes.length <= limit) return { info, chunks: bytes.length === 0 ? [] : [bytes] }
      owned = false
      return { info, chunks: after(bytes, streamFrom(fd)) }
    } finally {
      if (owned) closeSync(fd)
    }
  }

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const st = statSync(target.targetKey, { throwIfNoEntry: false })
    if (st === undefined) throw FsError.notFound('list', target.displayPath)
    if (!st.isDirectory()) throw FsError.notDirectory('list', target.displayPath)
    // Listed through a descriptor verified at the canonical path: a directory swapped for a link is refused, not followed.
    const dirents = await readdirVerified(target)
    // Both parents are normalized absolute paths: concatenation is what join would return, minus its cost.
    const keyPrefix = childPath(target.targetKey, '')
    const displayPrefix = childPath(target.displayPath, '')
    // Reached without a link (the common case), a child's display path is its key: one string serves both.
    const samePrefix = keyPrefix === displayPrefix
    const entries: FsDirEntry[] = []
    for (const dirent of dirents) {
      const name = dirent.name
      let type: FsDirEntry['type']
      if (dirent.isFile()) {
        // Lock entries of writers at work (or of dead ones) are dropped in this same pass.
        if (isLockName(name)) continue
        type = 'file'
      } else if (dirent.isDirectory()) {
        // Staging residue is dropped in this same pass.
        if (isStagingName(name)) continue
        type = 'directory'
      } else if (dirent.isSymbolicLink()) {
        if (isLockName(name)) continue
        entries.push(this.#linkEntry(name, keyPrefix + name, displayPrefix + name))
        continue
      } else {
        type = 'other'
      }
      const key = keyPrefix + name
      entries.push({ name, type, target: { targetKey: FsTargetKey(key), displayPath: samePrefix ? key : displayPrefix + name } })
    }
    return entries
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    // A create-if-absent publishes by link(2), which never replaces: the kernel arbitrates, no lock needed.
    if (request.expected?.kind === 'createIfAbsent') return this.#locks.run(target.targetKey, () => this.#publish(target, bytes, request, undefined))
    // Every other write takes the cross-process lock too: an edit of another process must not read
    // the old content, lose this write under its own and report success. A lock entry needs the
    // target's directory: missing levels are made first (and removed again if the write fails).
    assertWriteName(target)
    return this.#withParents(target, 'write', () =>
      this.#locked([target.targetKey], { verb: 'write', path: target.displayPath, signal: request.signal }, (hold) =>
        this.#publish(target, bytes, request, hold),
      ),
    )
  }

  /** Runs `fn` with the directory of `target` there (made like `mkdir -p` when missing, and removed again when `fn` fails). */
  async #withParents<T>(target: FsTarget, verb: FsVerb, fn: () => Promise<T>): Promise<T> {
    const dir = dirname(target.targetKey)
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true) return fn()
    let made: readonly string[] = []
    try {
      const anchored = ensureAnchor(dir, verb, target.displayPath)
      anchored.anchor.close()
      made = anchored.made
    } catch {
      // A file on the way or a swapped level: the operation itself meets it and says so.
      return fn()
    }
    try {
      return await fn()
    } catch (err) {
      removeMadeDirectories(made)
      throw err
    }
  }

  async #publish(target: FsTarget, bytes: Uint8Array, request: WriteRequest, hold: LeaseHold | undefined): Promise<WriteResult> {
    const { expected, signal, beforeMaxBytes, onBefore } = request
    const path = target.displayPath
    throwIfAborted(signal, 'write')
    assertWriteName(target)
    const current = statSync(target.targetKey, { bigint: true, throwIfNoEntry: false })
    if (current !== undefined && !current.isFile()) throw FsError.notRegularFile('write', path)
    checkGuard('write', path, expected, current && versionOf(current))
    if (current !== undefined) assertWritable(target.targetKey, current, 'write', path)
    const before = current === undefined ? null : await this.#diffBasis(target, current, beforeMaxBytes, signal)
    // Core finds what changed while the publication below writes and syncs.
    if (before !== null) onBefore?.(before)
    const published = await this.#publisher.publish({
      key: target.targetKey,
      displayPath: path,
      bytes,
      mode: expected?.kind === 'createIfAbsent' ? 'link' : 'rename',
      permissions: current === undefined ? this.#newFileMode : Number(current.mode & 0o777n),
      owner: current === undefined ? undefined : { uid: Number(current.uid), gid: Number(current.gid) },
      verb: 'write',
      signal,
      hooks: this.#hooks,
      recheck: (now) => {
        hold?.assertHeld('write', path)
        if (expected?.kind === 'replaceIfVersion') checkGuard('write', path, expected, now && versionOf(now))
      },
    })
    return { created: current === undefined, version: versionOf(published), before }
  }

  protected override async updateBytes(
    target: FsTarget,
    { expected, signal, maxBytes }: UpdateRequest,
    transform: (bytes: Uint8Array) => Uint8Array,
  ): Promise<FsVersion> {
    const path = target.displayPath
    return this.#locked([target.targetKey], { verb: 'edit', path, signal }, async (hold) => {
      throwIfAborted(signal, 'edit')
      let fd: number
      try {
        fd = openVerified(target.targetKey, READ_FLAGS, 'edit', path)
      } catch (err) {
        if (GONE.has(errnoOf(err) ?? '')) throw FsError.stale('edit', path, 'gone', err)
        throw err
      }
      let current: BigIntStats
      let edited: Uint8Array
      let lease: Buffer | undefined
      try {
        let bytes: Buffer
        try {
          current = fstatSync(fd, { bigint: true })
          if (!current.isFile()) throw FsError.notRegularFile('edit', path)
          checkGuard('edit', path, expected, versionOf(current))
          assertWritable(target.targetKey, current, 'edit', path)
          lease = current.size < BigInt(maxBytes) ? readPool.take(Number(current.size) + 1) : undefined
          bytes = await readWhole(fd, current, { limit: maxBytes, verb: 'edit', path, signal, into: lease })
        } finally {
          closeSync(fd)
        }
        // Read into the pool's buffer (the file did not outgrow it): lent, so core keeps none of it past the call.
        edited = transform(lease !== undefined && bytes.buffer === lease.buffer ? lendBytes(bytes) : bytes)
      } finally {
        if (lease !== undefined) readPool.give(lease)
      }
      const published = await this.#publisher.publish({
        key: target.targetKey,
        displayPath: path,
        bytes: edited,
        mode: 'rename',
        permissions: Number(current.mode & 0o777n),
        owner: { uid: Number(current.uid), gid: Number(current.gid) },
        verb: 'edit',
        signal,
        hooks: this.#hooks,
        // The edit read this version: whatever replaced it since would be lost under the edit's text.
        recheck: (now) => {
          hold.assertHeld('edit', path)
          checkGuard('edit', path, { version: versionOf(current) }, now && versionOf(now))
        },
      })
      return versionOf(published)
    })
  }

  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return this.#locked([target.targetKey], { verb: 'remove', path: target.displayPath, signal: request.signal }, async (hold) => {
      throwIfAborted(request.signal, 'remove')
      return removeEntry(target, request, { hold, hooks: this.#hooks })
    })
  }

  /** Both keys locked, in one fixed order (so two renames between the same names cannot deadlock). */
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const move = (): Promise<FsRenameOutcome> =>
      this.#locked([from.targetKey, to.targetKey], { verb: 'rename', path: from.displayPath, signal: request.signal }, async (hold) => {
        throwIfAborted(request.signal, 'rename')
        return moveEntry(from, to, request, { hold, hooks: this.#hooks })
      })
    // The destination's lock entry needs its directory; a reserved name is refused by moveEntry before anything is made.
    return statSync(from.targetKey, { throwIfNoEntry: false }) === undefined ? move() : this.#withParents(to, 'rename', move)
  }

  /**
   * Runs `fn` holding every key: first this process's mutex of each (FIFO among the callers here, so
   * one of them at a time polls the store), then each key's lock entry (among every seamfs process
   * on this disk). Keys are taken in sorted order, so two callers of the same pair cannot deadlock.
   * `ctx`: the verb and path of the wait's errors, and the signal that ends it (its deadline is set here).
   */
  #locked<T>(keys: readonly string[], { verb, path, signal }: LockContext, fn: (hold: LeaseHold) => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort()
    // One deadline for the whole wait, in this process's queue and then on the disk: N callers queued on one hot file do not wait N times.
    const deadline = this.#leases === undefined ? undefined : Date.now() + this.#leases.maxWaitMs
    const hold = (i: number): Promise<T> => {
      const key = sorted[i]
      if (key === undefined) {
        if (this.#leases === undefined) return fn(PROCESS_HOLD)
        return this.#leases.run(sorted, { verb, path, signal, deadline }, fn)
      }
      return this.#locks.run(key, () => hold(i + 1), { verb, path, signal, deadline })
    }
    return hold(0)
  }

  protected override async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return makeDirectoryAt(target.targetKey, target.displayPath, signal)
  }

  #absolute(path: string, cwd: string | undefined): string {
    return absolutePath(path, cwd === undefined ? this.cwd : absolutePath(cwd, this.cwd))
  }

  /**
   * A symlinked child: followed; broken or looping → `other` without metadata. Its key and its
   * metadata come from one descriptor (`O_PATH`, the name the kernel gives it, then fstat), so that a
   * directory swapped on the way between two lookups cannot pair one file's key with another's
   * metadata (a sandbox decides by the key what it may show).
   */
  #linkEntry(name: string, childKey: string, displayPath: string): FsDirEntry {
    if (DESCRIPTOR_PATHS) {
      let fd: number | undefined
      try {
        fd = openSync(childKey, O_PATH)
      } catch (err) {
        const code = errnoOf(err) ?? ''
        if (code === 'ENOENT' || UNFOLLOWABLE.has(code)) return { name, type: 'other', target: { targetKey: FsTargetKey(brokenKey(childKey)), displayPath } }
        if (!NO_DESCRIPTOR.has(code)) throw err
      }
      if (fd !== undefined) {
        try {
          const real = readlinkSync(fdPath(fd))
          if (real.startsWith('/') && !real.endsWith(' (deleted)'))
            return { name, target: { targetKey: FsTargetKey(real), displayPath }, ...infoOf(fstatSync(fd, { bigint: true })) }
        } finally {
          closeSync(fd)
        }
      }
    }
    let st: BigIntStats | undefined
    try {
      st = statSync(childKey, { bigint: true, throwIfNoEntry: false })
    } catch (err) {
      if (!UNFOLLOWABLE.has(errnoOf(err) ?? '')) throw err
    }
    if (st === undefined) {
      return { name, type: 'other', target: { targetKey: FsTargetKey(brokenKey(childKey)), displayPath } }
    }
    const target = { targetKey: FsTargetKey(canonicalPath(childKey)), displayPath }
    return { name, target, ...infoOf(st) }
  }

  /** The previous bytes of a write, when at most `limit`; a file that cannot be read back has none. */
  async #diffBasis(target: FsTarget, current: BigIntStats, limit: number, signal: AbortSignal | undefined): Promise<Uint8Array | null> {
    if (current.size > BigInt(limit)) return null
    let fd: number | undefined
    try {
      fd = openVerified(target.targetKey, READ_FLAGS, 'write', target.displayPath)
      const bytes = await readUpTo(fd, { size: Number(current.size), limit, verb: 'write', signal })
      return bytes.length > limit ? null : bytes
    } catch (err) {
      // An abort (an FsError) must fail the write; a store error only costs the diff basis.
      if (isFsError(err) || errnoOf(err) === undefined) throw err
      return null
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
}

/**
 * The file's bytes in chunks, with one chunk of read-ahead (as createReadStream
 * does) so the disk and the consumer overlap. Two buffers take turns: a chunk is
 * refilled only once the next one was asked for, which the hook contract allows.
 */
async function* streamFile(target: FsTarget): AsyncGenerator<Uint8Array> {
  const fd = openVerified(target.targetKey, READ_FLAGS, 'read', target.displayPath)
  try {
    if (!fstatSync(fd).isFile()) throw FsError.notRegularFile('read', target.displayPath)
  } catch (err) {
    closeSync(fd)
    throw err
  }
  yield* streamFrom(fd)
}

/**
 * The chunks of an open regular file's descriptor, which the stream owns: closed when the stream ends,
 * fails or is stopped (also before its first chunk was asked for: see {@link closingOnReturn}).
 */
function streamFrom(fd: number): AsyncIterable<Uint8Array> {
  return closingOnReturn(chunksOf(fd), () => closeSync(fd))
}

/** `source`, with `release` run once when it ends, fails or is stopped, whether or not a chunk was asked for. */
function closingOnReturn(source: AsyncGenerator<Uint8Array>, release: () => void): AsyncIterable<Uint8Array> {
  let released = false
  const once = (): void => {
    if (released) return
    released = true
    release()
  }
  let started = false
  const iterator: AsyncIterator<Uint8Array> = {
    next: async () => {
      started = true
      try {
        const step = await source.next()
        if (step.done === true) once()
        return step
      } catch (err) {
        once()
        throw err
      }
    },
    return: async () => {
      // A started generator waits in its `finally` for the read in flight before the descriptor closes.
      if (started) await source.return(undefined)
      once()
      return { done: true, value: undefined }
    },
  }
  return { [Symbol.asyncIterator]: () => iterator }
}

/** `first`, then the chunks of `rest` (released like `rest`, also when stopped at `first`). */
function after(first: Uint8Array, rest: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const inner = rest[Symbol.asyncIterator]()
  let given = false
  const iterator: AsyncIterator<Uint8Array> = {
    next: () => {
      if (given) return inner.next()
      given = true
      return Promise.resolve({ done: false, value: first })
    },
    return: async () => (await inner.return?.()) ?? { done: true, value: undefined },
  }
  return { [Symbol.asyncIterator]: () => iterator }
}

/** The chunks behind `fd`, with one chunk of read-ahead; the caller closes `fd` once this has ended. */
async function* chunksOf(fd: number): AsyncGenerator<Uint8Array> {
  let pending: Promise<number> | undefined
  try {
    let current = Buffer.allocUnsafe(STREAM_CHUNK)
    let next = Buffer.allocUnsafe(STREAM_CHUNK)
    pending = readChunk(fd, current, 0, STREAM_CHUNK)
    for (;;) {
      const n = await pending
      pending = undefined
      if (n === 0) return
      const filled = current
      current = next
      next = filled
      pending = readChunk(fd, current, 0, STREAM_CHUNK)
      yield filled.subarray(0, n)
    }
  } finally {
    // A read still in flight (the consumer stopped early, or failed) must end before the fd closes.
    if (pending !== undefined) await pending.catch(() => undefined)
  }
}
