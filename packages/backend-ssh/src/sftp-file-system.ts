import { posix } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  assertEditRequest,
  processWide,
  assertWriteIntent,
  compareNames,
  decodeText,
  decodeTextOrNull,
  editTextBytes,
  encodeWriteContent,
  FileSystem,
  FsError,
  FsTargetKey,
  KeyedMutex,
  normalizeLf,
  throwIfAborted,
  type EditOptions,
  type FsCapabilities,
  type FsDirEntry,
  type FsEditOutcome,
  type FsEditRequest,
  type FsInfo,
  type FsPathInfo,
  type FsTarget,
  type FsVerb,
  type FsVersion,
  type FsWriteOutcome,
  type ResolveOptions,
  type SignalOptions,
  type WriteOptions,
} from '@seamfs/core'
import { assertPathText } from '@seamfs/core'
import { Connection, type Attrs, type Session } from './connection.js'
import { STATUS, statusOf, toFsError } from './errors.js'
import {
  DEFAULT_DIFF_BASIS_MAX_BYTES,
  DEFAULT_NEW_FILE_MODE,
  DEFAULT_PORT,
  DEFAULT_READY_TIMEOUT_MS,
  type SftpFileSystemOptions,
} from './options.js'
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

/**
 * A directory on an SFTP server (OpenSSH) behind the seamfs contract, over
 * one reused ssh2 SFTP session. Writes are atomic (temp + fsync + posix-rename),
 * guarded creates atomic across clients (hardlink), version guards checked
 * under a per-target lock inside this process. Versions are content hashes:
 * see {@link VersionCache} for what that costs and how it is kept cheap.
 */
export class SftpFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = SFTP_CAPABILITIES
  readonly #conn: Connection
  readonly #options: Readonly<SftpFileSystemOptions>
  readonly #lockScope: string
  readonly #urlBase: string
  readonly #versions: VersionCache
  readonly #publisher: Publisher
  readonly #diffBasisMaxBytes: number
  readonly #newFileMode: number
  #ready: Promise<{ root: string; cwd: string }> | undefined
  #root = ''

  constructor(options: Readonly<SftpFileSystemOptions>) {
    super()
    if (options.client === undefined && (options.host === undefined || options.username === undefined)) {
      throw new TypeError('SftpFileSystem needs host and username, or a connected client')
    }
    const cap = options.diffBasisMaxBytes ?? DEFAULT_DIFF_BASIS_MAX_BYTES
    if (!Number.isSafeInteger(cap) || cap < 0) throw new RangeError('diffBasisMaxBytes must be a non-negative integer')
    const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
    this.#options = options
    this.#diffBasisMaxBytes = cap
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
      throw toFsError(err, 'resolve', this.#options.root ?? '.')
    }
  }

  /** Ends the SFTP session (and the connection, when this filesystem made it). Idempotent. */
  override async close(): Promise<void> {
    await this.#conn.close()
  }

  override async resolve(path: string, opts: ResolveOptions = {}): Promise<FsTarget> {
    throwIfAborted(opts.signal, 'resolve')
    assertPathText(path, 'resolve')
    let abs = path
    try {
      const { s, root, cwd } = await this.#session()
      abs = this.#absolute(path, opts.cwd, cwd)
      if (!containsPath(root, abs)) throw outsideRoot('resolve', abs, root)
      const key = await canonicalPath(s, abs, 'resolve')
      if (!containsPath(root, key)) throw outsideRoot('resolve', abs, root)
      throwIfAborted(opts.signal, 'resolve')
      return { targetKey: FsTargetKey(key), displayPath: abs }
    } catch (err) {
      throw toFsError(err, 'resolve', abs)
    }
  }

  /** Always `FS_UNSUPPORTED`: the file is on the server. {@link remotePath} is its path there. */
  override processPath(target: FsTarget): string {
    throw new FsError(
      'FS_UNSUPPORTED',
      `"${target.displayPath}" is on the SFTP server, not openable by this process (remotePath() gives its path there)`,
    )
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

  override async stat(target: FsTarget, opts: SignalOptions = {}): Promise<FsInfo | undefined> {
    throwIfAborted(opts.signal, 'stat')
    try {
      const { s } = await this.#session()
      const key = this.#key(target, 'stat')
      const [, attrs] = await Promise.all([this.#fence(s, key, 'stat', target), s.stat(key).catch(absent)])
      if (attrs === undefined) return undefined
      const kind = kindOf(attrs.mode)
      if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind === 'directory' ? kind : 'other' }
      const version = await this.#fileVersion(s, key, attrs, 'stat', opts.signal)
      return version === undefined ? undefined : { version, type: 'file', size: attrs.size }
    } catch (err) {
      throw toFsError(err, 'stat', target.displayPath)
    }
  }

  override async lstat(path: string, opts: ResolveOptions = {}): Promise<FsPathInfo | undefined> {
    throwIfAborted(opts.signal, 'lstat')
    assertPathText(path, 'lstat')
    let abs = path
    try {
      const { s, root, cwd } = await this.#session()
      abs = this.#absolute(path, opts.cwd, cwd)
      if (!containsPath(root, abs)) throw outsideRoot('lstat', abs, root)
      const parent = abs === root ? undefined : posix.dirname(abs)
      const display = { displayPath: abs }
      const [, attrs] = await Promise.all([
        parent === undefined ? undefined : this.#fence(s, parent, 'lstat', display),
        s.lstat(abs).catch(absent),
      ])
      if (attrs === undefined) return undefined
      const kind = kindOf(attrs.mode)
      if (kind !== 'file') return { version: metadataVersion(kind, attrs), type: kind }
      const version = await this.#fileVersion(s, abs, attrs, 'lstat', opts.signal)
      return version === undefined ? undefined : { version, type: 'file', size: attrs.size }
    } catch (err) {
      throw toFsError(err, 'lstat', abs)
    }
  }

  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    throwIfAborted(opts.signal, 'read')
    try {
      const { s } = await this.#session()
      const key = this.#key(target, 'read')
      const attrs = await this.#regularFile(s, key, 'read', target)
      const handle = await s.open(key, 'r')
      try {
        const bytes = await s.readAll(handle, attrs.size, 'read', opts.signal)
        return decodeText(bytes, target.displayPath, 'read')
      } finally {
        s.close(handle).catch(() => undefined)
      }
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    }
  }

  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    throwIfAborted(opts.signal, 'read')
    try {
      const { s } = await this.#session()
      const key = this.#key(target, 'read')
      await this.#regularFile(s, key, 'read', target)
      // The handle is opened on first iteration, so an iterable that is never consumed holds nothing.
      return streamFile(s, key, target.displayPath, opts.signal)
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    }
  }

  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    const { signal } = opts
    throwIfAborted(signal, 'list')
    try {
      const { s, root } = await this.#session()
      const key = this.#key(target, 'list')
      const [, attrs] = await Promise.all([this.#fence(s, key, 'list', target), s.stat(key).catch(absent)])
      if (attrs === undefined) throw new FsError('FS_NOT_FOUND', `cannot list "${target.displayPath}": not found`)
      if (kindOf(attrs.mode) !== 'directory') {
        throw new FsError('FS_NOT_DIRECTORY', `cannot list "${target.displayPath}": not a directory`)
      }
      const listing = await s.readdir(key)
      throwIfAborted(signal, 'list')
      const entries = await Promise.all(
        listing
          .filter((e) => !(isTempName(e.filename) && kindOf(e.attrs.mode) === 'file'))
          .map(async (e): Promise<FsDirEntry> => {
            const name = e.filename
            const child = { targetKey: FsTargetKey(childPath(key, name)), displayPath: childPath(target.displayPath, name) }
            const kind = kindOf(e.attrs.mode)
            if (kind === 'file') return { name, type: 'file', target: child, size: e.attrs.size }
            if (kind !== 'symlink') return { name, type: kind === 'directory' ? kind : 'other', target: child }
            // A link: followed on the server; broken, looping or leading out of the root is `other`.
            const [real, linked] = await Promise.all([s.realpath(child.targetKey).catch(() => undefined), s.stat(child.targetKey).catch(() => undefined)])
            if (real === undefined || linked === undefined || !containsPath(root, real)) return { name, type: 'other', target: child }
            const followed = { targetKey: FsTargetKey(real), displayPath: child.displayPath }
            const type = kindOf(linked.mode)
            if (type === 'file') return { name, type, target: followed, size: linked.size }
            return { name, type: type === 'directory' ? type : 'other', target: followed }
          }),
      )
      return entries.sort((a, b) => compareNames(a.name, b.name))
    } catch (err) {
      throw toFsError(err, 'list', target.displayPath)
    }
  }

  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'write')
    const bytes = encodeWriteContent(content, target.displayPath)
    assertWriteIntent(expected, target.displayPath)
    const after = normalizeLf(content)
    try {
      const { s } = await this.#session()
      const key = this.#key(target, 'write')
      const name = posix.basename(key)
      if (isTempName(name)) {
        throw new FsError('FS_UNSUPPORTED', `cannot write "${target.displayPath}": the name "${name}" is reserved for temp files`)
      }
      if (expected?.kind === 'createIfAbsent') {
        // No lock: the hard link decides, against this process and every other client alike.
        const [, current] = await Promise.all([this.#fence(s, key, 'write', target), s.stat(key).catch(absent)])
        if (current !== undefined) this.#assertFile(current, 'write', target, 'FS_NOT_OBSERVED')
        const attrs = await this.#publish(s, { key, displayPath: target.displayPath, bytes, mode: 'link', permissions: this.#newFileMode, verb: 'write', signal })
        return { operation: 'create', version: this.#published(key, attrs, bytes), before: null, after }
      }
      return await locks.run(`${this.#lockScope}\0${key}`, async () => {
        throwIfAborted(signal, 'write')
        const [, current] = await Promise.all([this.#fence(s, key, 'write', target), s.stat(key).catch(absent)])
        if (current !== undefined) this.#assertFile(current, 'write', target)
        if (expected?.kind === 'replaceIfVersion' && current === undefined) throw stale('write', target, 'file no longer exists')
        let before: string | null = null
        if (current !== undefined && (expected !== undefined || current.size <= this.#diffBasisMaxBytes)) {
          const read = await this.#readCurrent(s, key, current, 'write', signal)
          if (expected?.kind === 'replaceIfVersion' && read?.version !== expected.version) {
            throw stale('write', target, read === undefined ? 'file no longer exists' : 'file changed since it was read')
          }
          const text = read === undefined || read.bytes.length > this.#diffBasisMaxBytes ? null : decodeTextOrNull(read.bytes)
          before = text === null ? null : normalizeLf(text)
        }
        const permissions = current === undefined ? this.#newFileMode : current.mode & 0o777
        const attrs = await this.#publish(s, { key, displayPath: target.displayPath, bytes, mode: 'rename', permissions, verb: 'write', signal })
        return { operation: current === undefined ? 'create' : 'update', version: this.#published(key, attrs, bytes), before, after }
      })
    } catch (err) {
      throw toFsError(err, 'write', target.displayPath)
    }
  }

  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'edit')
    assertEditRequest(edit)
    try {
      const { s } = await this.#session()
      const key = this.#key(target, 'edit')
      return await locks.run(`${this.#lockScope}\0${key}`, async () => {
        throwIfAborted(signal, 'edit')
        const [, current] = await Promise.all([this.#fence(s, key, 'edit', target), s.stat(key).catch(absent)])
        if (current === undefined) throw stale('edit', target, 'file no longer exists')
        this.#assertFile(current, 'edit', target)
        const read = await this.#readCurrent(s, key, current, 'edit', signal)
        if (read === undefined) throw stale('edit', target, 'file no longer exists')
        if (expected !== undefined && read.version !== expected.version) {
          throw stale('edit', target, 'file changed since it was read')
        }
        const result = editTextBytes(read.bytes, edit, target.displayPath)
        const attrs = await this.#publish(s, {
          key,
          displayPath: target.displayPath,
          bytes: result.bytes,
          mode: 'rename',
          permissions: current.mode & 0o777,
          verb: 'edit',
          signal,
        })
        return { version: this.#published(key, attrs, result.bytes), before: result.before, after: result.after }
      })
    } catch (err) {
      throw toFsError(err, 'edit', target.displayPath)
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

  async #locateRoot(s: Session): Promise<{ root: string; cwd: string }> {
    const home = await s.realpath('.')
    const wanted = posix.resolve(home, this.#options.root ?? '.')
    const root = await s.realpath(wanted).catch((err: unknown) => {
      throw toFsError(err, 'resolve', wanted)
    })
    const attrs = await s.stat(root).catch((err: unknown) => {
      throw toFsError(err, 'resolve', wanted)
    })
    if (kindOf(attrs.mode) !== 'directory') throw new FsError('FS_NOT_FOUND', `root "${wanted}" is not a directory`)
    const cwd = posix.resolve(root, this.#options.cwd ?? '.')
    if (!containsPath(root, cwd)) throw outsideRoot('resolve', cwd, root)
    this.#root = root
    return { root, cwd }
  }

  #absolute(path: string, cwdOption: string | undefined, cwd: string): string {
    if (cwdOption !== undefined && (typeof cwdOption !== 'string' || !cwdOption.isWellFormed())) {
      throw new FsError('FS_NOT_FOUND', 'cwd must be a string of well-formed Unicode')
    }
    return posix.resolve(cwdOption === undefined ? cwd : posix.resolve(cwd, cwdOption), path)
  }

  /** The target's key, refused when it lies outside the root (a forged or foreign target). */
  #key(target: FsTarget, verb: FsVerb): string {
    const key: string = target.targetKey
    if (typeof key !== 'string' || !key.startsWith('/') || posix.normalize(key) !== key || !containsPath(this.#root, key)) {
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

  async #regularFile(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<Attrs> {
    const [, attrs] = await Promise.all([this.#fence(s, key, verb, target), s.stat(key).catch(absent)])
    if (attrs === undefined) throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${target.displayPath}": not found`)
    this.#assertFile(attrs, verb, target)
    return attrs
  }

  #assertFile(attrs: Attrs, verb: FsVerb, target: FsTarget, existing?: 'FS_NOT_OBSERVED'): void {
    if (kindOf(attrs.mode) !== 'file') {
      throw new FsError('FS_NOT_REGULAR_FILE', `cannot ${verb} "${target.displayPath}": not a regular file`)
    }
    if (existing !== undefined) {
      throw new FsError(existing, `cannot overwrite existing "${target.displayPath}" without reading it first`)
    }
  }

  /** A file's content-hash version: from the settled cache, else by reading it (undefined when it vanished). */
  async #fileVersion(s: Session, key: string, attrs: Attrs, verb: FsVerb, signal?: AbortSignal): Promise<FsVersion | undefined> {
    const cached = this.#versions.lookup(key, attrs)
    if (cached !== undefined) return cached
    try {
      return (await this.#readCurrent(s, key, attrs, verb, signal))?.version
    } catch (err) {
      // A file this user may not read still has metadata: its version falls back to it.
      if (statusOf(err) === STATUS.PERMISSION_DENIED) return metadataVersion('unreadable', attrs)
      throw err
    }
  }

  /** Reads a file whole with the attrs of the same handle, hashes it, and offers the hash to the cache. */
  async #readCurrent(
    s: Session,
    key: string,
    attrs: Attrs,
    verb: FsVerb,
    signal?: AbortSignal,
  ): Promise<{ bytes: Buffer; version: FsVersion } | undefined> {
    const startedAt = performance.now()
    const handle = await s.open(key, 'r').catch(absent)
    if (handle === undefined) return undefined
    try {
      const [opened, bytes] = await Promise.all([s.fstat(handle), s.readAll(handle, attrs.size, verb, signal)])
      const version = contentVersion(bytes)
      this.#versions.offer(key, opened, version, startedAt)
      return { bytes, version }
    } finally {
      s.close(handle).catch(() => undefined)
    }
  }

  #publish(s: Session, req: Parameters<Publisher['publish']>[1]): Promise<Attrs> {
    return this.#publisher.publish(s, req)
  }

  /** Bookkeeping after a publication; returns the new version. */
  #published(key: string, attrs: Attrs, bytes: Uint8Array): FsVersion {
    this.#versions.observe(attrs.mtime)
    this.#versions.forget(key)
    return contentVersion(bytes)
  }
}

function stale(verb: FsVerb, target: FsTarget, why: string): FsError {
  return new FsError('FS_STALE_VERSION', `cannot ${verb} "${target.displayPath}": ${why}`)
}
