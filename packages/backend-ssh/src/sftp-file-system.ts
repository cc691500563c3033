import { posix } from 'node:path'
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
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { ServerClock } from './clock.js'
import { Connection } from './connection.js'
import { CommitPoint, sftpErrorRow } from './errors.js'
import { checkHostKeyOptions } from './known-hosts.js'
import { checkOptions, DEFAULT_PORT, DEFAULT_READY_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, type SftpFileSystemOptions } from './options.js'
import { retryRead } from './retry.js'
import { dropOpening, openChecked, readChecked, readdirChecked, sendOpen } from './checked-reads.js'
import { FileHints } from './hints.js'
import { ensureDirectory } from './directories.js'
import { dirEntry, hidden, mtimeOf } from './listing.js'
import { TargetLocks } from './locking.js'
import { removeAt, renameAt, type MutationContext } from './mutations.js'
import { canonicalPath, containsPath, kindOf, outsideRoot } from './paths.js'
import { Publisher } from './publish.js'
import type { Attrs, Session } from './session.js'
import { StageKeeper, Sweeper } from './sweep.js'
import { streamFile } from './stream.js'
import { absent, Targets } from './targets.js'
import { metadataVersion, VersionCache } from './versions.js'
import { publishBytes, updateBytes, type WriteSite } from './write-hooks.js'

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

/** Up to this size, `openFile` reads the file whole in its first look (and hashes it); a larger one is streamed. */
const WHOLE_OPEN_BYTES = 8 * 1024 * 1024

interface Ready {
  readonly s: Session
  readonly root: string
  readonly cwd: string
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
  readonly #targets: Targets
  readonly #writes: WriteSite
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
    this.#targets = new Targets(() => this.#root, this.#hints, this.#versions)
    this.#publisher = new Publisher(() => this.#root, this.#keeper, this.#clock)
    const site = { session: async () => (await this.#session()).s, root: () => this.#root, clock: this.#clock }
    this.#locks = new TargetLocks(scope, { ...site, leaseMs: options.lockLeaseMs ?? DEFAULT_LEASE_MS }, options.lockWaitMs)
    this.#sweeper = new Sweeper({ ...site, leases: this.#locks.store, background: options.sweepAbandoned ?? true })
    this.#writes = {
      session: site.session,
      targets: this.#targets,
      hints: this.#hints,
      publisher: this.#publisher,
      locks: this.#locks,
      sweeper: this.#sweeper,
      newFileMode: this.#newFileMode,
    }
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

  /**
   * The store's root is the `root` scope (`/` lies outside it): the directory core never removes or
   * moves. Canonical since the session located it, so it costs no request.
   */
  protected override async rootTarget(): Promise<FsTarget> {
    const { root } = await this.#session()
    return { targetKey: FsTargetKey(root), displayPath: root }
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
    const key = this.#targets.key(target, 'stat')
    // A file with no settled hash is read: its OPEN goes with the stat when the file was just seen.
    const opening = this.#hints.openable(key) && !this.#versions.has(key) ? sendOpen(s, key) : undefined
    const attrs = await this.#targets.current(s, key, 'stat', target).catch((err: unknown) => {
      dropOpening(s, opening)
      throw err
    })
    const kind = attrs === undefined ? undefined : kindOf(attrs.mode)
    if (attrs === undefined || kind !== 'file') dropOpening(s, opening)
    if (attrs === undefined || kind === undefined) return undefined
    const mtime = mtimeOf(attrs)
    if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind === 'directory' ? kind : 'other', mtime }
    const version = await this.#targets.fileVersion(s, key, attrs, { verb: 'stat', path: target.displayPath, signal, opening })
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
    const [, attrs] = await Promise.all([
      parent === undefined ? undefined : this.#targets.fence(s, parent, 'lstat', { displayPath: abs }),
      s.lstat(abs).catch(absent),
    ])
    if (attrs === undefined) return undefined
    const kind = kindOf(attrs.mode)
    const mtime = mtimeOf(attrs)
    if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind, mtime }
    const version = await this.#targets.fileVersion(s, abs, attrs, { verb: 'lstat', path: abs, signal })
    return version === undefined ? undefined : { version, type: 'file', size: attrs.size, mtime }
  }

  protected override loadBytes(target: FsTarget, { signal, maxBytes }: ReadRequest): Promise<Uint8Array> {
    return retryRead('read', signal, () => this.#loadBytes(target, signal, maxBytes))
  }

  async #loadBytes(target: FsTarget, signal: AbortSignal | undefined, maxBytes: number): Promise<Uint8Array> {
    const { s } = await this.#session()
    const key = this.#targets.key(target, 'read')
    const opening = this.#hints.openable(key) ? sendOpen(s, key) : undefined
    let attrs: Attrs
    try {
      attrs = await this.#targets.regularFile(s, key, 'read', target)
      // Refused on the stat that came with the fence: no READ.
      if (attrs.size > maxBytes) throw FsError.tooLarge('read', target.displayPath, attrs.size, maxBytes)
    } catch (err) {
      dropOpening(s, opening)
      throw err
    }
    // One byte past the limit is enough for core to see that the file grew beyond it.
    return (await readChecked(s, this.#targets.site(key, 'read', target.displayPath), { sizeHint: attrs.size, limit: maxBytes + 1, signal, first: opening }))
      .bytes
  }

  /** Only opening the stream is retried: one cut mid-way fails (its bytes were handed out). */
  protected override openBytes(target: FsTarget, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return retryRead('read', signal, () => this.#openBytes(target))
  }

  async #openBytes(target: FsTarget): Promise<AsyncIterable<Uint8Array>> {
    const { s } = await this.#session()
    const key = this.#targets.key(target, 'read')
    await this.#targets.regularFile(s, key, 'read', target)
    return streamFile(s, (first) => openChecked(s, this.#targets.site(key, 'read', target.displayPath), first))
  }

  /**
   * The file's info and bytes from one open: its stat goes with the fence (and, for a file just seen,
   * the OPEN too), then a file of at most {@link WHOLE_OPEN_BYTES} is read whole, checked and hashed
   * (its version is the hash of the very bytes returned): the round trips of `readText`, not of
   * `stat` and then a read. A larger file is hashed first (unless its hash is settled), then streamed.
   */
  protected override openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    return retryRead('read', signal, () => this.#openTarget(target, signal))
  }

  async #openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const { s } = await this.#session()
    const key = this.#targets.key(target, 'read')
    const path = target.displayPath
    const opening = this.#hints.openable(key) ? sendOpen(s, key) : undefined
    let attrs: Attrs
    try {
      attrs = await this.#targets.regularFile(s, key, 'read', target)
    } catch (err) {
      dropOpening(s, opening)
      throw err
    }
    const mtime = mtimeOf(attrs)
    if (attrs.size <= WHOLE_OPEN_BYTES) {
      const read = await this.#targets.readCurrent(s, key, attrs, { verb: 'read', path, signal, opening })
      if (read === undefined) throw FsError.notFound('read', path)
      return { info: { type: 'file', version: read.version, size: read.bytes.length, mtime }, chunks: [read.bytes] }
    }
    const version = await this.#targets.fileVersion(s, key, attrs, { verb: 'read', path, signal, opening })
    if (version === undefined) throw FsError.notFound('read', path)
    const chunks = streamFile(s, (first) => openChecked(s, this.#targets.site(key, 'read', path), first))
    return { info: { type: 'file', version, size: attrs.size, mtime }, chunks }
  }

  protected override listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    return retryRead('list', signal, () => this.#listEntries(target, signal))
  }

  async #listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const { s, root } = await this.#session()
    const key = this.#targets.key(target, 'list')
    // The OPENDIRs go with the stat (one round trip): on anything but a directory they fail or are dropped.
    const gate = this.#targets.current(s, key, 'list', target).then((attrs) => {
      if (attrs === undefined) throw FsError.notFound('list', target.displayPath)
      if (kindOf(attrs.mode) !== 'directory') throw FsError.notDirectory('list', target.displayPath)
    })
    gate.catch(() => undefined)
    const listing = await readdirChecked(s, this.#targets.site(key, 'list', target.displayPath), gate)
    // Before following links: one request each, wasted on a caller that is gone.
    throwIfAborted(signal, 'list')
    // Stages and lock entries are never shown; a dead writer's go in the background.
    if (listing.some(hidden)) this.#sweeper.touch(key)
    const site = { s, root, key, dir: target, hints: this.#hints }
    return Promise.all(listing.filter((e) => !hidden(e)).map((e) => dirEntry(site, e)))
  }

  /** A layer's fence comes in with the write's first round trip: the stage and the lock entry go at once, the content and the rename after it. */
  protected override takesFence(): boolean {
    return true
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return CommitPoint.run('write', request.signal, (point) => publishBytes(this.#writes, target, bytes, request, point))
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return CommitPoint.run('edit', request.signal, (point) => updateBytes(this.#writes, target, request, transform, point))
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
      const key = this.#targets.key(target, 'remove')
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
      const [source, destination] = [this.#targets.key(from, 'rename'), this.#targets.key(to, 'rename')]
      this.#targets.refuseReserved(destination, 'rename', to.displayPath)
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
      const key = this.#targets.key(target, 'create directory')
      this.#targets.refuseReserved(key, 'create directory', target.displayPath)
      throwIfAborted(signal, 'create directory')
      const site = { root, verb: 'create directory', path: target.displayPath, notDirectory: true, making: point.reached } as const
      return (await ensureDirectory(s, key, site)) !== undefined
    })
  }

  /** What mutations.ts needs: the session, and this filesystem's fence, versions and locks. */
  async #mutations(point: CommitPoint): Promise<MutationContext> {
    const { s, root } = await this.#session()
    return {
      s,
      root,
      versions: this.#versions,
      current: async (key, verb, path) => {
        const [, attrs] = await Promise.all([this.#targets.fence(s, key, verb, { displayPath: path }), s.lstat(key).catch(absent)])
        return attrs
      },
      version: (key, attrs, op) => this.#targets.fileVersion(s, key, attrs, op),
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
}
