import { posix } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  checkGuard,
  FileSystem,
  FsError,
  FsTargetKey,
  KeyedMutex,
  processWide,
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
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { Connection, type Attrs, type Session } from './connection.js'
import { sftpErrorRow, STATUS, statusOf } from './errors.js'
import { checkHostKeyOptions } from './known-hosts.js'
import { DEFAULT_NEW_FILE_MODE, DEFAULT_PORT, DEFAULT_READY_TIMEOUT_MS, type SftpFileSystemOptions } from './options.js'
import { dropOpening, openChecked, readChecked, readdirChecked, sendOpen, type Opening, type ReadSite } from './checked-reads.js'
import { FileHints } from './hints.js'
import { ensureDirectory } from './directories.js'
import { holdAll, removeAt, renameAt, type MutationContext } from './mutations.js'
import { canonicalPath, childPath, containsPath, kindOf, outsideRoot } from './paths.js'
import { isTempName, Publisher } from './publish.js'
import { streamFile } from './stream.js'
import { contentVersion, metadataVersion, VersionCache } from './versions.js'

const SFTP_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  permissions: true,
  // Paths name files on the server, not in this process: see `remotePath`.
  processPath: false,
  createIfAbsent: 'atomic',
  replaceIfVersion: 'process',
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

/** Per-target locks shared by every instance (and every copy of this package) in the process. */
const locks: KeyedMutex = processWide('backend-ssh:locks', () => new KeyedMutex())

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
 * under a per-target lock inside this process. Versions are content hashes:
 * see {@link VersionCache} for what that costs and how it is kept cheap.
 * Removes, renames (no-overwrite across clients: OpenSSH's plain rename) and
 * directories too; `mtime` is SFTP's, whole seconds (in ms).
 */
export class SftpFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = SFTP_CAPABILITIES
  readonly #conn: Connection
  readonly #options: Readonly<SftpFileSystemOptions>
  readonly #lockScope: string
  readonly #urlBase: string
  readonly #versions: VersionCache
  readonly #hints = new FileHints()
  readonly #publisher: Publisher
  readonly #newFileMode: number
  #ready: Promise<{ root: string; cwd: string }> | undefined
  #root = ''

  constructor(options: Readonly<SftpFileSystemOptions>) {
    if (options.client === undefined && (options.host === undefined || options.username === undefined)) {
      throw new TypeError('SftpFileSystem needs host and username, or a connected client')
    }
    checkHostKeyOptions(options)
    const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
    super(options)
    this.#options = options
    this.#newFileMode = mode
    const port = options.port ?? DEFAULT_PORT
    this.#conn = new Connection({ ...options, port, readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS })
    const host = options.host ?? 'ssh2-client'
    const user = options.username === undefined ? '' : `${encodeURIComponent(options.username)}@`
    this.#urlBase = `sftp://${user}${host.includes(':') ? `[${host}]` : host}:${port}`
    this.#lockScope = options.host === undefined ? `${this.#urlBase}#${Math.random()}` : this.#urlBase
    this.#versions = new VersionCache(options.hashCache ?? true)
    this.#publisher = new Publisher(() => this.#root)
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

  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
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

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
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

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
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

  protected override async loadBytes(target: FsTarget, { signal, maxBytes }: ReadRequest): Promise<Uint8Array> {
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

  protected override async openBytes(target: FsTarget): Promise<AsyncIterable<Uint8Array>> {
    const { s } = await this.#session()
    const key = this.#key(target, 'read')
    await this.#regularFile(s, key, 'read', target)
    return streamFile(s, (first) => openChecked(s, this.#site(key, 'read', target.displayPath), first))
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
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
    return Promise.all(
      listing
        .filter((e) => !(isTempName(e.filename) && (kindOf(e.attrs.mode) === 'file' || kindOf(e.attrs.mode) === 'directory')))
        .map(async (e): Promise<FsDirEntry> => {
          const name = e.filename
          const child = { targetKey: FsTargetKey(childPath(key, name)), displayPath: childPath(target.displayPath, name) }
          const kind = kindOf(e.attrs.mode)
          const mtime = mtimeOf(e.attrs)
          if (kind === 'file') {
            this.#hints.saw(child.targetKey, e.attrs)
            return { name, type: 'file', target: child, size: e.attrs.size, mtime }
          }
          if (kind !== 'symlink') return { name, type: kind === 'directory' ? kind : 'other', target: child, mtime }
          // A link: followed on the server; broken, looping or leading out of the root is `other` (with no mtime to give away).
          const [real, linked] = await Promise.all([s.realpath(child.targetKey).catch(() => undefined), s.stat(child.targetKey).catch(() => undefined)])
          if (real === undefined || linked === undefined || !containsPath(root, real)) return { name, type: 'other', target: child }
          const followed = { targetKey: FsTargetKey(real), displayPath: child.displayPath }
          const type = kindOf(linked.mode)
          if (type === 'file') return { name, type, target: followed, size: linked.size, mtime: mtimeOf(linked) }
          return { name, type: type === 'directory' ? type : 'other', target: followed, mtime: mtimeOf(linked) }
        }),
    )
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, { expected, signal, beforeMaxBytes }: WriteRequest): Promise<WriteResult> {
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
      const request = { key, displayPath: path, bytes, mode: 'link', verb: 'write', signal } as const
      const { attrs } = await this.#publisher.publish(s, request, { ready, commit: async () => undefined })
      return { created: true, version: this.#published(key, attrs, bytes), before: null }
    }
    return locks.run(`${this.#lockScope}\0${key}`, async () => {
      throwIfAborted(signal, 'write')
      // The current file is read for the guard (its hash is the version) or the diff basis.
      const wanted = (size: number): boolean => expected !== undefined || (beforeMaxBytes > 0 && size <= beforeMaxBytes)
      const hinted = this.#hints.fileSize(key)
      let opening = hinted !== undefined && wanted(hinted) ? sendOpen(s, key) : undefined
      // Taken once: by the read, or closed when the write fails before it (never closed twice: handles are reused).
      const take = (): Opening | undefined => {
        const sent = opening
        opening = undefined
        return sent
      }
      const stated = this.#current(s, key, 'write', target)
      let current: Attrs | undefined
      let read: { bytes: Buffer; version: FsVersion } | undefined
      const ready = stated.then((attrs) => {
        current = attrs
        if (current !== undefined) this.#assertFile(current, 'write', target)
        // Unguarded, a write-protected file is refused before its content is read for the diff basis.
        if (current !== undefined && expected === undefined) assertWritable(current, 'write', path)
        return current === undefined ? this.#newFileMode : current.mode & 0o777
      })
      ready.catch(() => dropOpening(s, take()))
      const commit = async (): Promise<undefined> => {
        const sent = take()
        // A guarded write reads the file whatever its size.
        if (current !== undefined && wanted(current.size)) read = await this.#readCurrent(s, key, current, { verb: 'write', path, signal, opening: sent })
        else dropOpening(s, sent)
        checkGuard('write', path, expected, read?.version)
        if (current !== undefined) assertWritable(current, 'write', path)
        return undefined
      }
      const request = { key, displayPath: path, bytes, mode: 'rename', verb: 'write', signal } as const
      const { attrs } = await this.#publisher.publish(s, request, { ready, commit }).finally(() => dropOpening(s, take()))
      const before = read !== undefined && read.bytes.length <= beforeMaxBytes ? read.bytes : null
      return { created: current === undefined, version: this.#published(key, attrs, bytes), before }
    })
  }

  protected override async updateBytes(
    target: FsTarget,
    { expected, signal, maxBytes }: UpdateRequest,
    transform: (bytes: Uint8Array) => Uint8Array,
  ): Promise<FsVersion> {
    const { s } = await this.#session()
    const key = this.#key(target, 'edit')
    const path = target.displayPath
    await this.#fenceFirst(s, key, 'edit', target)
    return locks.run(`${this.#lockScope}\0${key}`, async () => {
      throwIfAborted(signal, 'edit')
      const hinted = this.#hints.fileSize(key)
      let opening = hinted !== undefined && hinted <= maxBytes ? sendOpen(s, key) : undefined
      const take = (): Opening | undefined => {
        const sent = opening
        opening = undefined
        return sent
      }
      let current: Attrs | undefined
      const ready = this.#current(s, key, 'edit', target).then((attrs) => {
        if (attrs === undefined) throw FsError.stale('edit', path, 'gone')
        this.#assertFile(attrs, 'edit', target)
        // The version is the content's hash, so the guard can only be checked on the bytes:
        // a file above the limit is refused before any of them is read.
        if (attrs.size > maxBytes) throw FsError.tooLarge('edit', path, attrs.size, maxBytes)
        current = attrs
        return attrs.mode & 0o777
      })
      ready.catch(() => dropOpening(s, take()))
      const commit = async (): Promise<Uint8Array> => {
        const sent = take()
        const attrs = current as Attrs
        const read = await this.#readCurrent(s, key, attrs, { verb: 'edit', path, signal, maxBytes, opening: sent })
        if (read === undefined) throw FsError.stale('edit', path, 'gone')
        checkGuard('edit', path, expected, read.version)
        assertWritable(attrs, 'edit', path)
        return transform(read.bytes)
      }
      const request = { key, displayPath: path, mode: 'rename', verb: 'edit', signal } as const
      const { attrs, bytes } = await this.#publisher.publish(s, request, { ready, commit }).finally(() => dropOpening(s, take()))
      return this.#published(key, attrs, bytes)
    })
  }

  /**
   * `remove` (mutations.ts, tree.ts): under the per-target lock writes take, the version guard is
   * checked on the content hash, then the entry is unlinked (rmdir-ed) by a path through a stage
   * (stages.ts) made in its directory, so a directory swapped for a link meanwhile makes it fail
   * instead of removing a file outside the root. Windows left: the guard holds against this
   * process only (`replaceIfVersion: 'process'`: another client may write between the check and
   * the unlink); a directory renamed out of the root by a process on the server (not a link
   * swap) between the stage's check and the unlink takes the stage with it, and is reported
   * after the fact (`FS_SANDBOX_DENIED`: what may have been removed), not prevented. The root
   * itself is never removed (`FS_SANDBOX_DENIED`).
   */
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const c = await this.#mutations()
    return removeAt(c, { key: this.#key(target, 'remove'), path: target.displayPath }, request)
  }

  /**
   * `rename` (mutations.ts: `renameAt` says which SFTP request moves what, and the window a
   * directory move leaves): under the locks of both ends, guards checked on content hashes, the
   * entry moved by paths through stages in both directories, probed as `removeTarget` is.
   */
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const c = await this.#mutations()
    const [source, destination] = [this.#key(from, 'rename'), this.#key(to, 'rename')]
    this.#refuseReserved(destination, 'rename', to.displayPath)
    return renameAt(c, { key: source, path: from.displayPath }, { key: destination, path: to.displayPath }, request)
  }

  /** `createDirectory`: mkdir -p with each directory made checked to be where it should be (directories.ts, as for writes). */
  protected override async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    const { s, root } = await this.#session()
    const key = this.#key(target, 'create directory')
    this.#refuseReserved(key, 'create directory', target.displayPath)
    throwIfAborted(signal, 'create directory')
    const made = await ensureDirectory(s, key, { root, verb: 'create directory', path: target.displayPath, notDirectory: true })
    return made !== undefined
  }

  /** Listings hide (and sweeps remove) temp names: a file or directory made under one would be lost from view. */
  #refuseReserved(key: string, verb: FsVerb, path: string): void {
    const reserved = key.slice(this.#root.length).split('/').find(isTempName)
    if (reserved !== undefined) throw FsError.unsupported(verb, path, `the name "${reserved}" is reserved for temp files`)
  }

  /** What mutations.ts needs: the session, and this filesystem's fence, versions and locks. */
  async #mutations(): Promise<MutationContext> {
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
      locked: (keys, fn) =>
        holdAll(
          locks,
          keys.map((key) => `${this.#lockScope}\0${key}`),
          fn,
        ),
    }
  }

  async #session(): Promise<Ready> {
    const s = await this.#conn.session()
    const { root, cwd } = await (this.#ready ??= this.#locateRoot(s).catch((err: unknown) => {
      this.#ready = undefined
      throw err
    }))
    await this.#publisher.sweep(s)
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

/** SFTP's whole-second mtime in milliseconds. */
function mtimeOf(attrs: Attrs): number {
  return attrs.mtime * 1000
}

/**
 * Refuses to replace a write-protected file: one whose mode grants write to no one (`0444`), as an
 * editor would. The server's rename ignores the file's own mode (only the directory's counts), so
 * without this a write or edit would silently replace it. (Whether this user may write a file
 * whose mode grants write to others only is not asked: SFTP does not say who the user is.)
 */
function assertWritable(attrs: Attrs, verb: 'write' | 'edit', path: string): void {
  const mode = attrs.mode & 0o7777
  if ((mode & 0o222) === 0) throw FsError.at('FS_PERMISSION_DENIED', verb, path, `the file is write-protected (mode 0${mode.toString(8).padStart(3, '0')})`)
}
