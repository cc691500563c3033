import { posix } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  DEFAULT_LEASE_MS,
  FileSystem,
  FsError,
  FsTargetKey,
  throwIfAborted,
  translateError,
  type ErrorRow,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type FsVersion,
  type LeaseHold,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { ServerClock } from './clock.js'
import { Connection, type Attrs, type Session } from './connection.js'
import { CommitPoint, sftpErrorRow, STATUS, statusOf } from './errors.js'
import { checkHostKeyOptions } from './known-hosts.js'
import { checkOptions, DEFAULT_PORT, DEFAULT_READY_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, type SftpFileSystemOptions } from './options.js'
import { retryRead } from './retry.js'
import { dropOpening, openChecked, readChecked, readdirChecked, sendOpen, type Opening, type ReadSite } from './checked-reads.js'
import { planEdit, planWrite, type PlanSite } from './writes.js'
import { FileHints } from './hints.js'
import { ensureDirectory } from './directories.js'
import { dirEntry, hidden, mtimeOf } from './listing.js'
import { TargetLocks } from './locking.js'
import { removeAt, renameAt, type MutationContext } from './mutations.js'
import { isReservedName } from './names.js'
import { canonicalPath, containsPath, kindOf, outsideRoot } from './paths.js'
import { Publisher } from './publish.js'
import { StageKeeper, Sweeper } from './sweep.js'
import { streamFile } from './stream.js'
import { contentVersion, metadataVersion, VersionCache } from './versions.js'

const SFTP_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  permissions: true,
  // Paths name files on the server, not in this process: see `remotePath`.
  processPath: false,
  createIfAbsent: 'atomic',
  // Lock entries with leases in the target's directory (leases.ts): every seamfs writer of the server
  // honours them, in any process on any machine; a program that knows nothing of them does not.
  replaceIfVersion: 'seamfs',
  versionSource: 'content-hash',
  newlineInNames: true,
  emptyDirectories: true,
  remove: true,
  rename: 'atomic',
  renameDirectories: true,
  createDirectory: 'native',
  // SFTP v3 attrs carry whole seconds.
  mtime: true,
})

const absent = (err: unknown): undefined => {
  if (statusOf(err) === STATUS.NO_SUCH_FILE) return undefined
  throw err
}

interface Ready {
  readonly s: Session
  readonly root: string
  readonly cwd: string
}

/** What `#readCurrent` reads for: the verb and path of its errors, the signal, and an optional size limit. */
interface ReadFor {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
  readonly maxBytes?: number
  /** An OPEN of the file already sent (see `sendOpen`). */
  readonly opening?: Opening | undefined
}

/**
 * A directory on an SFTP server (OpenSSH) behind the seamfs contract, over
 * one reused ssh2 SFTP session. Writes are atomic (temp + fsync + posix-rename),
 * guarded creates atomic across clients (hardlink), version guards checked
 * under a per-target lock held among every seamfs writer of the server (a lock
 * entry with a lease in the target's directory: leases.ts). Versions are content hashes:
 * see {@link VersionCache} for what that costs and how it is kept cheap.
 * Removes, renames (no-overwrite across clients: OpenSSH's plain rename) and
 * directories too; `mtime` is SFTP's, whole seconds (in ms).
 */
export class SftpFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = SFTP_CAPABILITIES
  readonly #conn: Connection
  readonly #options: Readonly<SftpFileSystemOptions>
  readonly #urlBase: string
  readonly #versions: VersionCache
  readonly #hints = new FileHints()
  readonly #publisher: Publisher
  readonly #clock = new ServerClock()
  readonly #keeper = new StageKeeper()
  readonly #locks: TargetLocks
  readonly #sweeper: Sweeper
  readonly #newFileMode: number
  #ready: Promise<{ root: string; cwd: string }> | undefined
  #root = ''

  constructor(options: Readonly<SftpFileSystemOptions>) {
    if (options.client === undefined && (options.host === undefined || options.username === undefined)) {
      throw new TypeError('SftpFileSystem needs host and username, or a connected client')
    }
    checkHostKeyOptions(options)
    const mode = checkOptions(options)
    super(options)
    this.#options = options
    this.#newFileMode = mode
    const port = options.port ?? DEFAULT_PORT
    this.#conn = new Connection({
      ...options,
      port,
      readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    })
    const host = options.host ?? 'ssh2-client'
    const user = options.username === undefined ? '' : `${encodeURIComponent(options.username)}@`
    this.#urlBase = `sftp://${user}${host.includes(':') ? `[${host}]` : host}:${port}`
    // An injected client may lead anywhere: its instance shares no mutex.
    const scope = options.host === undefined ? `${this.#urlBase}#${Math.random()}` : this.#urlBase
    this.#versions = new VersionCache(options.hashCache ?? true)
    this.#publisher = new Publisher(() => this.#root, this.#keeper, this.#clock)
    const site = { session: async () => (await this.#session()).s, root: () => this.#root, clock: this.#clock }
    this.#locks = new TargetLocks(scope, { ...site, leaseMs: options.lockLeaseMs ?? DEFAULT_LEASE_MS }, options.lockWaitMs)
    this.#sweeper = new Sweeper({ ...site, leases: this.#locks.store, background: options.sweepAbandoned ?? true })
  }

  /** Connects (if not yet) and checks the root; every other method does this on first use. */
  async connect(): Promise<void> {
    try {
      await this.#session()
    } catch (err) {
      throw this.#translate(err, 'resolve', this.#options.root ?? '.')
    }
  }

  /** Ends the SFTP session (and the connection, when this filesystem made it). Idempotent. */
  override async close(): Promise<void> {
    this.#sweeper.close()
    this.#keeper.close()
    await this.#conn.close()
  }

  /** The canonical path of `target` in the server's filesystem (what `processPath` would be on that host). */
  remotePath(target: FsTarget): string {
    return target.targetKey
  }

  override fileUrl(target: FsTarget): string {
    return this.#urlBase + target.targetKey.split('/').map(encodeURIComponent).join('/')
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return containsPath(parent.targetKey, child.targetKey)
  }

  protected override errorRow(err: unknown): ErrorRow {
    return sftpErrorRow(err)
  }

  // The read hooks below run again over a new connection when theirs dropped under them (retry.ts);
  // the mutation hooks never do, and report a failure before their change was sent as definite.

  protected override resolvePath(path: string, cwd: string | undefined, signal?: AbortSignal): Promise<FsTarget> {
    return retryRead('resolve', signal, () => this.#resolvePath(path, cwd))
  }

  async #resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const { s, root, cwd: base } = await this.#session()
    const abs = posix.resolve(cwd === undefined ? base : posix.resolve(base, cwd), path)
    if (!containsPath(root, abs)) throw outsideRoot('resolve', abs, root)
    // The stat rides along: a regular file seen now lets the operation that follows send its OPEN at once.
    const seen = s.stat(abs).catch(() => undefined)
    const key = await canonicalPath(s, abs, 'resolve')
    if (!containsPath(root, key)) throw outsideRoot('resolve', abs, root)
    this.#hints.sawInside(key)
    this.#hints.saw(key, await seen)
    return { targetKey: FsTargetKey(key), displayPath: abs }
  }

  protected override statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return retryRead('stat', signal, () => this.#statTarget(target, signal))
  }

  async #statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    const { s } = await this.#sessionNotAbsent('stat', target.displayPath)
    const key = this.#key(target, 'stat')
    // A file with no settled hash is read: its OPEN goes with the stat when the file was just seen.
    const opening = this.#hints.fileSize(key) !== undefined && !this.#versions.has(key) ? sendOpen(s, key) : undefined
    const attrs = await this.#current(s, key, 'stat', target).catch((err: unknown) => {
      dropOpening(s, opening)
      throw err
    })
    const kind = attrs === undefined ? undefined : kindOf(attrs.mode)
    if (attrs === undefined || kind !== 'file') dropOpening(s, opening)
    if (attrs === undefined || kind === undefined) return undefined
    const mtime = mtimeOf(attrs)
    if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind === 'directory' ? kind : 'other', mtime }
    const version = await this.#fileVersion(s, key, attrs, { verb: 'stat', path: target.displayPath, signal, opening })
    return version === undefined ? undefined : { version, type: 'file', size: attrs.size, mtime }
  }

  protected override lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    return retryRead('lstat', signal, () => this.#lstatPath(path, cwd, signal))
  }

  async #lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    const { s, root, cwd: base } = await this.#sessionNotAbsent('lstat', path)
    const abs = posix.resolve(cwd === undefined ? base : posix.resolve(base, cwd), path)
    if (!containsPath(root, abs)) throw outsideRoot('lstat', abs, root)
    const parent = abs === root ? undefined : posix.dirname(abs)
    const [, attrs] = await Promise.all([parent === undefined ? undefined : this.#fence(s, parent, 'lstat', { displayPath: abs }), s.lstat(abs).catch(absent)])
    if (attrs === undefined) return undefined
    const kind = kindOf(attrs.mode)
    const mtime = mtimeOf(attrs)
    if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind, mtime }
    const version = await this.#fileVersion(s, abs, attrs, { verb: 'lstat', path: abs, signal })
    return version === undefined ? undefined : { version, type: 'file', size: attrs.size, mtime }
  }

  protected override loadBytes(target: FsTarget, { signal, maxBytes }: ReadRequest): Promise<Uint8Array> {
    return retryRead('read', signal, () => this.#loadBytes(target, signal, maxBytes))
  }

  async #loadBytes(target: FsTarget, signal: AbortSignal | undefined, maxBytes: number): Promise<Uint8Array> {
    const { s } = await this.#session()
    const key = this.#key(target, 'read')
    const opening = this.#hints.fileSize(key) !== undefined ? sendOpen(s, key) : undefined
    let attrs: Attrs
    try {
      attrs = await this.#regularFile(s, key, 'read', target)
      // Refused on the stat that came with the fence: no READ.
      if (attrs.size > maxBytes) throw FsError.tooLarge('read', target.displayPath, attrs.size, maxBytes)
    } catch (err) {
      dropOpening(s, opening)
      throw err
    }
    // One byte past the limit is enough for core to see that the file grew beyond it.
    return (await readChecked(s, this.#site(key, 'read', target.displayPath), attrs.size, signal, maxBytes + 1, opening)).bytes
  }

  /** Only opening the stream is retried: one cut mid-way fails (its bytes were handed out). */
  protected override openBytes(target: FsTarget, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return retryRead('read', signal, () => this.#openBytes(target))
  }

  async #openBytes(target: FsTarget): Promise<AsyncIterable<Uint8Array>> {
    const { s } = await this.#session()
    const key = this.#key(target, 'read')
    await this.#regularFile(s, key, 'read', target)
    return streamFile(s, (first) => openChecked(s, this.#site(key, 'read', target.displayPath), first))
  }

  protected override listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    return retryRead('list', signal, () => this.#listEntries(target, signal))
  }

  async #listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const { s, root } = await this.#session()
    const key = this.#key(target, 'list')
    // The OPENDIRs go with the stat (one round trip): on anything but a directory they fail or are dropped.
    const gate = this.#current(s, key, 'list', target).then((attrs) => {
      if (attrs === undefined) throw FsError.notFound('list', target.displayPath)
      if (kindOf(attrs.mode) !== 'directory') throw FsError.notDirectory('list', target.displayPath)
    })
    gate.catch(() => undefined)
    const listing = await readdirChecked(s, this.#site(key, 'list', target.displayPath), gate)
    // Before following links: one request each, wasted on a caller that is gone.
    throwIfAborted(signal, 'list')
    // Stages and lock entries are never shown; a dead writer's go in the background.
    if (listing.some(hidden)) this.#sweeper.touch(key)
    return Promise.all(listing.filter((e) => !hidden(e)).map((e) => dirEntry(s, root, key, target, e, this.#hints)))
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return CommitPoint.run('write', request.signal, (point) => this.#publishBytes(target, bytes, request, point))
  }

  async #publishBytes(target: FsTarget, bytes: Uint8Array, { expected, signal, beforeMaxBytes }: WriteRequest, point: CommitPoint): Promise<WriteResult> {
    const { s } = await this.#session()
    const key = this.#key(target, 'write')
    const path = target.displayPath
    // Listings hide (and sweeps remove) such names: a file written under one would be lost from view.
    this.#refuseReserved(key, 'write', path)
    await this.#fenceFirst(s, key, 'write', target)
    if (expected?.kind === 'createIfAbsent') {
      // No lock: the hard link decides, against this process and every other client alike.
      const ready = this.#current(s, key, 'write', target).then((current) => {
        if (current === undefined) return this.#newFileMode
        this.#assertFile(current, 'write', target)
        throw FsError.notObserved(path)
      })
      const request = { key, displayPath: path, bytes, mode: 'link', verb: 'write', signal, guarded: false, committing: point.reached } as const
      const { attrs } = await this.#publisher
        .publish(s, request, { ready, commit: async () => undefined })
        .finally(() => this.#sweeper.touch(posix.dirname(key)))
      return { created: true, version: this.#published(key, attrs, bytes), before: null }
    }
    const guarded = expected?.kind === 'replaceIfVersion'
    // An unguarded write takes the lock entry too: an edit of another process must not read the
    // old content, publish over this write and report success (the edit's guard holds only if
    // every seamfs writer of the target takes part).
    return this.#locks
      .run([key], { verb: 'write', path, signal }, async (hold: LeaseHold | undefined) => {
        throwIfAborted(signal, 'write')
        const plan = planWrite(this.#planSite(s, key, 'write', target, signal), expected, beforeMaxBytes)
        const release = (on: Session, via: string): void => this.#locks.releaseEarly(on, key, via)
        const request = { key, displayPath: path, bytes, mode: 'rename', verb: 'write', signal, guarded, hold, release, committing: point.reached } as const
        const { attrs } = await this.#publisher.publish(s, request, plan).finally(plan.dispose)
        const { current, read } = plan.found()
        const before = read !== undefined && read.bytes.length <= beforeMaxBytes ? read.bytes : null
        return { created: current === undefined, version: this.#published(key, attrs, bytes), before }
      })
      .finally(() => this.#sweeper.touch(posix.dirname(key)))
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return CommitPoint.run('edit', request.signal, (point) => this.#updateBytes(target, request, transform, point))
  }

  async #updateBytes(
    target: FsTarget,
    { expected, signal, maxBytes }: UpdateRequest,
    transform: (bytes: Uint8Array) => Uint8Array,
    point: CommitPoint,
  ): Promise<FsVersion> {
    const { s } = await this.#session()
    const key = this.#key(target, 'edit')
    const path = target.displayPath
    this.#refuseReserved(key, 'edit', path)
    await this.#fenceFirst(s, key, 'edit', target)
    return this.#locks
      .run([key], { verb: 'edit', path, signal }, async (hold) => {
        throwIfAborted(signal, 'edit')
        const plan = planEdit(this.#planSite(s, key, 'edit', target, signal), expected, maxBytes, transform)
        // The lock's entry goes behind the rename, in its round trip.
        const release = (on: Session, via: string): void => this.#locks.releaseEarly(on, key, via)
        const request = { key, displayPath: path, mode: 'rename', verb: 'edit', signal, guarded: true, hold, release, committing: point.reached } as const
        const { attrs, bytes } = await this.#publisher.publish(s, request, plan).finally(plan.dispose)
        return this.#published(key, attrs, bytes)
      })
      .finally(() => this.#sweeper.touch(posix.dirname(key)))
  }

  /** What the plans of writes.ts need for `key`. */
  #planSite(s: Session, key: string, verb: 'write' | 'edit', target: FsTarget, signal: AbortSignal | undefined): PlanSite {
    const path = target.displayPath
    return {
      s,
      key,
      verb,
      path,
      hinted: this.#hints.fileSize(key),
      newFileMode: this.#newFileMode,
      current: () => this.#current(s, key, verb, target),
      assertFile: (attrs) => this.#assertFile(attrs, verb, target),
      read: (attrs, opening, maxBytes) => this.#readCurrent(s, key, attrs, { verb, path, signal, opening, ...(maxBytes === undefined ? {} : { maxBytes }) }),
    }
  }

  /**
   * `remove` (mutations.ts, tree.ts): under the per-target lock guarded writes take (locking.ts),
   * the version guard is checked on the content hash, then the entry is unlinked (rmdir-ed) by a
   * path through a stage (stages.ts) made in its directory, so a directory swapped for a link
   * meanwhile makes it fail instead of removing a file outside the root. Windows left: the guard
   * holds among seamfs writers (`'seamfs'`: a program that knows nothing of the lock entries may
   * write between the check and the unlink); a directory renamed out of the root by a process on the server (not a link
   * swap) between the stage's check and the unlink takes the stage with it, and is reported
   * after the fact (`FS_SANDBOX_DENIED`: what may have been removed), not prevented. The root
   * itself is never removed (`FS_SANDBOX_DENIED`).
   */
  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return CommitPoint.run('remove', request.signal, async (point) => {
      const c = await this.#mutations(point)
      const key = this.#key(target, 'remove')
      return removeAt(c, { key, path: target.displayPath }, request).finally(() => this.#sweeper.touch(posix.dirname(key)))
    })
  }

  /**
   * `rename` (mutations.ts: `renameAt` says which SFTP request moves what, and the window a
   * directory move leaves): under the locks of both ends, guards checked on content hashes, the
   * entry moved by paths through stages in both directories, probed as `removeTarget` is.
   */
  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return CommitPoint.run('rename', request.signal, async (point) => {
      const c = await this.#mutations(point)
      const [source, destination] = [this.#key(from, 'rename'), this.#key(to, 'rename')]
      this.#refuseReserved(destination, 'rename', to.displayPath)
      return renameAt(c, { key: source, path: from.displayPath }, { key: destination, path: to.displayPath }, request).finally(() => {
        this.#sweeper.touch(posix.dirname(source))
        this.#sweeper.touch(posix.dirname(destination))
      })
    })
  }

  /** `createDirectory`: mkdir -p with each directory made checked to be where it should be (directories.ts, as for writes). */
  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return CommitPoint.run('create directory', signal, async (point) => {
      const { s, root } = await this.#session()
      const key = this.#key(target, 'create directory')
      this.#refuseReserved(key, 'create directory', target.displayPath)
      throwIfAborted(signal, 'create directory')
      const site = { root, verb: 'create directory', path: target.displayPath, notDirectory: true, making: point.reached } as const
      return (await ensureDirectory(s, key, site)) !== undefined
    })
  }

  /** Listings hide (and sweeps remove) temp names and lock entries: a file or directory made under one would be lost from view. */
  #refuseReserved(key: string, verb: FsVerb, path: string): void {
    const reserved = key.slice(this.#root.length).split('/').find(isReservedName)
    if (reserved !== undefined) throw FsError.unsupported(verb, path, `the name "${reserved}" is reserved for seamfs's temp files and lock entries`)
  }

  /** What mutations.ts needs: the session, and this filesystem's fence, versions and locks. */
  async #mutations(point: CommitPoint): Promise<MutationContext> {
    const { s, root } = await this.#session()
    return {
      s,
      root,
      versions: this.#versions,
      current: async (key, verb, path) => {
        const [, attrs] = await Promise.all([this.#fence(s, key, verb, { displayPath: path }), s.lstat(key).catch(absent)])
        return attrs
      },
      version: (key, attrs, verb, path, signal) => this.#fileVersion(s, key, attrs, { verb, path, signal }),
      orphan: (stage) => this.#publisher.adopt(stage),
      keeper: this.#keeper,
      clock: this.#clock,
      sweeper: this.#sweeper,
      locked: (keys, op, fn) => this.#locks.run(keys, op, fn),
      release: (keys) => keys.forEach((key) => this.#locks.releaseEarly(s, key)),
      committing: point.reached,
    }
  }

  async #session(): Promise<Ready> {
    const s = await this.#conn.session()
    const { root, cwd } = await (this.#ready ??= this.#locateRoot(s).catch((err: unknown) => {
      this.#ready = undefined
      throw err
    }))
    await Promise.all([this.#publisher.sweep(s), this.#locks.store.sweepOrphans(s)])
    return { s, root, cwd }
  }

  /**
   * The session for `stat` and `lstat`, whose `FS_NOT_FOUND` core reports as an absent path:
   * a root that cannot be found (or a login directory that cannot) is no absent file, so it is
   * `FS_IO_ERROR` there, with the root's own error as the cause.
   */
  async #sessionNotAbsent(verb: FsVerb, path: string): Promise<Ready> {
    try {
      return await this.#session()
    } catch (err) {
      const translated = this.#translate(err, verb, path)
      if (translated.code !== 'FS_NOT_FOUND') throw translated
      throw FsError.io(verb, path, `the filesystem's root is not usable (${translated.message})`, { cause: translated })
    }
  }

  /** Canonicalizes the root; its failures name the root, not the path of the operation that met them. */
  async #locateRoot(s: Session): Promise<{ root: string; cwd: string }> {
    const home = await s.realpath('.')
    const wanted = posix.resolve(home, this.#options.root ?? '.')
    let root: string
    let attrs: Attrs
    try {
      root = await s.realpath(wanted)
      attrs = await s.stat(root)
    } catch (err) {
      throw this.#translate(err, 'resolve', wanted)
    }
    if (kindOf(attrs.mode) !== 'directory') throw FsError.notDirectory('resolve', wanted)
    const cwd = posix.resolve(root, this.#options.cwd ?? '.')
    if (!containsPath(root, cwd)) throw outsideRoot('resolve', cwd, root)
    this.#root = root
    return { root, cwd }
  }

  #translate(err: unknown, verb: FsVerb, path: string): FsError {
    return translateError(err, verb, path, (e) => this.errorRow(e))
  }

  /** Who reads what, for the checks of checked-reads.ts. */
  #site(key: string, verb: FsVerb, path: string): ReadSite {
    return { root: this.#root, key, verb, path }
  }

  /** The target's key, refused when it lies outside the root (a forged or foreign target). */
  #key(target: FsTarget, verb: FsVerb): string {
    const key: string = target.targetKey
    if (!key.startsWith('/') || posix.normalize(key) !== key || !containsPath(this.#root, key)) {
      throw outsideRoot(verb, target.displayPath, this.#root)
    }
    return key
  }

  /**
   * The server's realpath of `key`, checked against the root. Sent with the
   * operation's first request (same round trip): a symlink swapped into the
   * path since `resolve` cannot lead an operation out of the root.
   */
  async #fence(s: Session, key: string, verb: FsVerb, target: { readonly displayPath: string }): Promise<void> {
    const real = await s.realpath(key).catch(absent)
    if (real !== undefined && !containsPath(this.#root, real)) throw outsideRoot(verb, target.displayPath, this.#root)
  }

  /**
   * Before a write makes its stage (with its own fence, in one round trip): the fence alone, first,
   * unless `key` was found inside the root moments ago. A directory swapped for an outward link
   * since then would have the stage made outside before the fence's answer came back.
   */
  async #fenceFirst(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<void> {
    if (this.#hints.inside(key)) return
    await this.#fence(s, key, verb, target)
    this.#hints.sawInside(key)
  }

  /** The attrs of `key` (symlinks followed), undefined when absent; fenced in the same round trip. */
  async #current(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<Attrs | undefined> {
    const [, attrs] = await Promise.all([this.#fence(s, key, verb, target), s.stat(key).catch(absent)])
    return attrs
  }

  async #regularFile(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<Attrs> {
    const attrs = await this.#current(s, key, verb, target)
    if (attrs === undefined) throw FsError.notFound(verb, target.displayPath)
    this.#assertFile(attrs, verb, target)
    return attrs
  }

  #assertFile(attrs: Attrs, verb: FsVerb, target: FsTarget): void {
    if (kindOf(attrs.mode) !== 'file') throw FsError.notRegularFile(verb, target.displayPath)
  }

  /** A file's content-hash version: from the settled cache, else by reading it (undefined when it vanished). */
  async #fileVersion(s: Session, key: string, attrs: Attrs, op: ReadFor): Promise<FsVersion | undefined> {
    const cached = this.#versions.lookup(key, attrs)
    if (cached !== undefined) {
      dropOpening(s, op.opening)
      return cached
    }
    try {
      return (await this.#readCurrent(s, key, attrs, op))?.version
    } catch (err) {
      // A file this user may not read still has metadata: its version falls back to it.
      if (statusOf(err) === STATUS.PERMISSION_DENIED) return metadataVersion('unreadable', attrs)
      throw err
    }
  }

  /**
   * Reads a file whole with the attrs of the same handle, hashes it, and offers the hash to
   * the cache; undefined when it vanished. With `maxBytes`, a file that grew beyond it since
   * its stat is `FS_TOO_LARGE`, and no more than `maxBytes + 1` bytes are held.
   */
  async #readCurrent(s: Session, key: string, attrs: Attrs, op: ReadFor): Promise<{ bytes: Buffer; version: FsVersion } | undefined> {
    const { verb, path, signal, maxBytes = Number.POSITIVE_INFINITY, opening } = op
    const startedAt = performance.now()
    const read = await readChecked(s, this.#site(key, verb, path), attrs.size, signal, maxBytes + 1, opening).catch(absent)
    if (read === undefined) return undefined
    const { bytes, attrs: opened } = read
    if (bytes.length > maxBytes) throw FsError.tooLarge(verb, path, Math.max(bytes.length, opened.size), maxBytes)
    const version = contentVersion(bytes)
    this.#versions.offer(key, opened, version, startedAt)
    return { bytes, version }
  }

  /** Bookkeeping after a publication; returns the new version. */
  #published(key: string, attrs: Attrs, bytes: Uint8Array): FsVersion {
    this.#versions.observe(attrs.mtime)
    this.#versions.forget(key)
    this.#hints.saw(key, attrs)
    this.#hints.sawInside(key)
    return contentVersion(bytes)
  }
}
