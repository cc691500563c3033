import { posix } from 'node:path'
import { Volume } from 'memfs'
import type { Dirent, Stats as MemStats } from '@jsonjoy.com/fs-node'
import { Superblock, type Link, type Node as MemNode } from '@jsonjoy.com/fs-core'
import {
  checkGuard,
  type Awaitable,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  isNormalizedAbsolute,
  type FsCapabilities,
  type FsDirEntry,
  type ErrorRow,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { codeOf, memfsErrorRow } from './errors.js'
import { forgetsWalks, LinkLookup } from './lookup.js'
import { childLinks, isWritableDirectory, pathOf, removeTree, treeLinks } from './links.js'
import { DEFAULT_NEW_FILE_MODE, type MemoryEntry, type MemoryFileSystemOptions } from './options.js'
import { seedTree, snapshotTree } from './tree.js'
import { bytesOf, canOpenForWrite, copyOf, createFileLink, isFileNode, replaceContent, stampNode, volumeProcess, type Caller } from './nodes.js'

type Stats = MemStats<number>

const MEMORY_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  permissions: true,
  processPath: false,
  // Every check and publication runs synchronously: nothing interleaves inside the process.
  createIfAbsent: 'atomic',
  replaceIfVersion: 'atomic',
  versionSource: 'generation',
  newlineInNames: true,
  emptyDirectories: true,
  // Removes, renames and directory creations are single synchronous steps too.
  remove: true,
  rename: 'atomic',
  renameDirectories: true,
  createDirectory: 'native',
  mtime: true,
  // Every read walks its key link by link in the same synchronous run: a link met on the way fails it.
  keyBoundReads: true,
})

const STREAM_CHUNK = 64 * 1024

/** Refuses a file whose mode grants write permission to no one, as an editor does (memfs itself only checks the caller's bits). */
function assertWritable(node: MemNode, verb: 'write' | 'edit', path: string): void {
  if ((node.perm & 0o222) === 0) throw FsError.writeProtected(verb, path, node.perm)
}
/** A directory involved grants no write permission (memfs's own check, made before anything changes). */
function denied(verb: 'remove' | 'rename', path: string): FsError {
  return FsError.at('FS_PERMISSION_DENIED', verb, path, 'permission denied (a directory involved grants no write permission)')
}
/** True when the canonical `key` is `dir` or below it (not for a mere name prefix). */
function isWithin(dir: string, key: string): boolean {
  const rel = posix.relative(dir, key)
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !posix.isAbsolute(rel))
}
const MAX_LINK_HOPS = 40
/** open(2) flags for memfs's lower layer. */
const O_WRONLY = 0o1
const O_CREAT = 0o100
const O_EXCL = 0o200
const O_TRUNC = 0o1000
/** Mode a new file is created with before it gets `newFileMode`. */
const CREATE_MODE = 0o600
/** memfs's FsEventType (a const enum we cannot import under isolatedModules). */
const EVENT_CREATE = 0
const EVENT_MODIFY = 2

/**
 * A whole filesystem in memory: one memfs `Volume` per instance, never the
 * global one, and no disk I/O. Built for agent tests: seed it from a plain
 * object, run the agent, assert on `toJSON()`.
 *
 * Versions are generations: every content change of a node, made through this
 * class or straight on `volume`, bumps a counter (memfs reports each change
 * synchronously), so even two same-size writes in one millisecond differ.
 *
 * Hot paths work on memfs's own nodes (see `nodes.ts`): a lookup is a walk
 * of `Map`s, a write replaces a node's buffer. Every case they do not decide
 * (symlinks, refused permissions, missing parents) goes through memfs's
 * `Superblock`, as before.
 */
export class MemoryFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = MEMORY_CAPABILITIES
  /** The volume behind this filesystem; tests may change it directly (versions follow). */
  readonly volume: Volume
  readonly cwd: string
  readonly #clock: () => number
  readonly #newFileMode: number
  readonly #generations = new Map<number, number>()
  readonly #unsubscribe: () => void
  readonly #core: Superblock
  /** Plain walks remembered by path, forgotten on every change that could falsify one. */
  readonly #lookup: LinkLookup
  /** Who the volume acts as (its process), and who memfs's `open` checks write permission for (the host process). */
  readonly #owner: Caller
  readonly #host: Caller
  /** memfs creates a file as mode 0600 of the owner and then checks write permission as the host: only then can a create take the fast path. */
  readonly #fastCreate: boolean
  #generation = 0

  constructor(options: Readonly<MemoryFileSystemOptions> = {}) {
    super(options)
    const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
    this.#host = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
    this.#owner = { uid: options.owner?.uid ?? this.#host.uid, gid: options.owner?.gid ?? this.#host.gid }
    this.#fastCreate = this.#owner.uid === this.#host.uid
    this.#core = new Superblock({ process: volumeProcess(this.#owner) })
    this.volume = new Volume(this.#core)
    this.#lookup = new LinkLookup(this.#core)
    this.#unsubscribe = this.#core.changes.listen((event) => {
      const type: number = event.type
      if (type === EVENT_CREATE || type === EVENT_MODIFY) {
        this.#generations.set(event.node.ino, ++this.#generation)
      } else if (forgetsWalks(type)) {
        this.#lookup.forget()
      }
    })
    this.cwd = posix.resolve('/', options.cwd ?? '/')
    this.#clock = options.clock ?? Date.now
    this.#newFileMode = mode
    this.volume.mkdirSync(this.cwd, { recursive: true })
    if (options.files !== undefined) seedTree(this.volume, this.cwd, options.files, this.#newFileMode)
  }

  /** Everything under `cwd`, in the shape `files` takes: `{ 'src/a.ts': 'text', 'empty/': null }`. */
  toJSON(): Record<string, MemoryEntry> {
    return snapshotTree(this.volume, this.cwd, this.#newFileMode)
  }

  override async close(): Promise<void> {
    this.#unsubscribe()
    this.#lookup.stop()
  }

  override fileUrl(target: FsTarget): string {
    return `memfs://${target.targetKey.split('/').map(encodeURIComponent).join('/')}`
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return isWithin(parent.targetKey, child.targetKey)
  }

  protected override resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget> {
    // A plain absolute path (no `.`, `..`, `//`, symlink or file on the way) is its own key: found or missing, no realpath to make.
    if (cwd === undefined && this.#lookup.find(path) !== undefined) return { targetKey: FsTargetKey(path), displayPath: path }
    const abs = this.#absolute(path, cwd)
    return { targetKey: FsTargetKey(this.#canonical(abs, 0)), displayPath: abs }
  }

  protected override statTarget(target: FsTarget): Awaitable<FsInfo | undefined> {
    const node = this.#node(target.targetKey, 'stat', target.displayPath)
    return node && this.#nodeInfo(node)
  }

  protected override lstatPath(path: string, cwd: string | undefined): Awaitable<FsPathInfo | undefined> {
    const abs = this.#absolute(path, cwd)
    const st = this.#statOrUndefined(abs, false)
    if (st === undefined) return undefined
    return st.isSymbolicLink() ? { type: 'symlink', version: this.#version(st), mtime: Number(st.mtimeMs) } : this.#info(st)
  }

  // The bytes are in memory already: core's size check after the read suffices. A copy: the caller's to change
  // (in Node's pool where core only decodes it, an array of its own where it reaches a caller).
  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    const bytes = this.#readFile(target, 'read')
    return request.transient === true ? Buffer.from(bytes) : copyOf(bytes)
  }

  protected override openBytes(target: FsTarget): Awaitable<Iterable<Uint8Array>> {
    // The node's buffer as it is now: every write truncates first, which gives the node a new buffer,
    // so the stream keeps showing the content as it was when it was opened. Chunks are copies.
    return chunksOf(this.#readFile(target, 'read'))
  }

  // One look: the node's stats and its bytes, as they are now (a later write gives the node a new buffer).
  protected override openTarget(target: FsTarget): Awaitable<OpenedFile> {
    const node = this.#node(target.targetKey, 'read', target.displayPath)
    const info = node && this.#nodeInfo(node)
    if (info === undefined) throw FsError.notFound('read', target.displayPath)
    if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
    const bytes = bytesOf(node as MemNode)
    // A file of one chunk is handed over whole, a copy (core gives it to a reader without a chunk's promise turns).
    if (bytes.length <= STREAM_CHUNK) return { info, chunks: bytes.length === 0 ? [] : [new Uint8Array(bytes)] }
    return { info, chunks: chunksOf(bytes) }
  }

  protected override listEntries(target: FsTarget): Awaitable<FsDirEntry[]> {
    const dir = this.#link(target.targetKey, 'list', target.displayPath)
    if (dir === undefined) throw FsError.notFound('list', target.displayPath)
    if (!dir.getNode().isDirectory()) throw FsError.notDirectory('list', target.displayPath)
    const entries: FsDirEntry[] = []
    for (const dirent of this.volume.readdirSync(target.targetKey, { withFileTypes: true }) as Dirent[]) {
      const name = String(dirent.name)
      const key = posix.join(target.targetKey, name)
      const displayPath = posix.join(target.displayPath, name)
      if (dirent.isSymbolicLink()) {
        const followed = this.#statOrUndefined(key, true)
        const linkTarget = { targetKey: FsTargetKey(this.#linkKey(key)), displayPath }
        entries.push(followed === undefined ? { name, type: 'other', target: linkTarget } : { name, target: linkTarget, ...this.#info(followed) })
      } else {
        const node = dir?.getChild(name)?.getNode()
        const type = dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : 'other'
        entries.push({ name, type, target: { targetKey: FsTargetKey(key), displayPath }, ...(node && this.#nodeInfo(node)) })
      }
    }
    return entries
  }

  protected override publishBytes(target: FsTarget, encoded: Uint8Array, request: WriteRequest): Awaitable<WriteResult> {
    return this.#publishPlain(target, encoded, request) ?? this.#publish(target, encoded, request)
  }

  /** {@link publishBytes} on memfs's nodes, where every check memfs would make passes; `undefined` where it would not decide. */
  #publishPlain(target: FsTarget, encoded: Uint8Array, request: WriteRequest): WriteResult | undefined {
    const core = this.#core
    const place = this.#lookup.parent(target.targetKey, this.#owner)
    if (place === undefined) return undefined
    const link = place.dir.children.get(place.name)
    if (link === undefined) {
      const dir = place.dir.node
      if (!this.#fastCreate || !canOpenForWrite(core, dir, this.#host) || !dir.canExecute(this.#host.uid, this.#host.gid)) return undefined
      if (request.expected !== undefined) checkGuard('write', target.displayPath, request.expected, undefined)
      const at = new Date(this.#clock())
      const created = createFileLink(core, place.dir, place.name, this.#newFileMode, this.#owner, at)
      replaceContent(core, created, encoded, at)
      return { created: true, version: this.#nodeVersion(created.node), before: null }
    }
    const node = link.node
    if (node.isSymlink()) return undefined
    if (!isFileNode(node)) throw FsError.notRegularFile('write', target.displayPath)
    // Unguarded, an existing file passes whatever its version: none is computed.
    if (request.expected !== undefined) checkGuard('write', target.displayPath, request.expected, this.#nodeVersion(node))
    assertWritable(node, 'write', target.displayPath)
    if (!canOpenForWrite(core, node, this.#host)) return undefined
    const before = node.getSize() <= request.beforeMaxBytes ? bytesOf(node) : null
    replaceContent(core, link, encoded, new Date(this.#clock()))
    return { created: false, version: this.#nodeVersion(node), before }
  }

  /** {@link publishBytes} through memfs's calls, for every case {@link #publishPlain} leaves to memfs. */
  #publish(target: FsTarget, encoded: Uint8Array, request: WriteRequest): WriteResult {
    const bytes = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength)
    const key = target.targetKey
    const node = this.#node(key, 'write', target.displayPath)
    if (node !== undefined && !node.isFile()) throw FsError.notRegularFile('write', target.displayPath)
    checkGuard('write', target.displayPath, request.expected, node && this.#nodeVersion(node))
    if (node !== undefined) assertWritable(node, 'write', target.displayPath)
    // A view: the truncating write below gives the node a new buffer and leaves this one as it is.
    const before = node !== undefined && node.getSize() <= request.beforeMaxBytes ? bytesOf(node) : null
    // One synchronous call: no other code of this process can observe a partial file.
    const core = this.volume._core
    if (node === undefined) {
      // Created writable, then given its mode, as the local and SFTP backends publish: a newFileMode without owner write still creates.
      try {
        core.writeFile(key, bytes, O_WRONLY | O_CREAT | O_EXCL, CREATE_MODE)
      } catch (err) {
        if (codeOf(err) !== 'ENOENT') throw err
        core.mkdirp(posix.dirname(key), 0o777)
        core.writeFile(key, bytes, O_WRONLY | O_CREAT | O_EXCL, CREATE_MODE)
      }
      if (this.#newFileMode !== CREATE_MODE) this.volume.chmodSync(key, this.#newFileMode)
    } else {
      core.writeFile(key, bytes, O_WRONLY | O_TRUNC, 0)
    }
    return { created: node === undefined, version: this.#stamp(node ?? this.#node(key, 'write', target.displayPath), key), before }
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion> {
    const key = target.targetKey
    const link = this.#lookup.find(key, this.#owner)
    if (link !== undefined && link !== null && isFileNode(link.node) && canOpenForWrite(this.#core, link.node, this.#host)) {
      const plain = link.node
      if (request.expected !== undefined) checkGuard('edit', target.displayPath, request.expected, this.#nodeVersion(plain))
      assertWritable(plain, 'edit', target.displayPath)
      replaceContent(this.#core, link, transform(bytesOf(plain)), new Date(this.#clock()))
      return this.#nodeVersion(plain)
    }
    const node = this.#node(key, 'edit', target.displayPath)
    if (node !== undefined && !node.isFile()) throw FsError.notRegularFile('edit', target.displayPath)
    checkGuard('edit', target.displayPath, request.expected, node && this.#nodeVersion(node))
    assertWritable(node as MemNode, 'edit', target.displayPath)
    const edited = transform(bytesOf(node as MemNode))
    this.volume._core.writeFile(key, Buffer.from(edited.buffer, edited.byteOffset, edited.byteLength), O_WRONLY | O_TRUNC, 0)
    return this.#stamp(node, key)
  }

  // Each hook below checks and changes in one synchronous run: no other code of this process interleaves.
  protected override removeTarget(target: FsTarget, { expected, recursive, maxEntries }: RemoveRequest): Awaitable<FsRemoveOutcome> {
    const path = target.displayPath
    const link = this.#link(target.targetKey, 'remove', path)
    if (link === undefined) throw expected === undefined ? FsError.notFound('remove', path) : FsError.stale('remove', path, 'gone')
    const node = link.getNode()
    if (!node.isFile() && !node.isDirectory()) throw FsError.notRegularFile('remove', path)
    checkGuard('remove', path, expected, this.#nodeVersion(node))
    // Core refuses the root before this hook (the root rule); the root has no parent to check.
    if (link === this.volume._core.root) throw FsError.storeRoot('remove', path)
    if (!isWritableDirectory(link.parent)) throw denied('remove', path)
    if (node.isDirectory() && !recursive && childLinks(link).length > 0) throw FsError.notEmpty('remove', path)
    const tree = treeLinks(link)
    if (tree.length > maxEntries) {
      throw FsError.tooManyEntries('remove', path, tree.length, maxEntries)
    }
    // Checked before anything goes, so that a refusal removes nothing.
    if (tree.some((entry) => childLinks(entry).length > 0 && !isWritableDirectory(entry))) throw denied('remove', path)
    removeTree(this.volume._core, tree)
    return { type: node.isFile() ? 'file' : 'directory', entries: tree.length }
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, { expected, overwrite }: RenameRequest): Awaitable<FsRenameOutcome> {
    const path = from.displayPath
    const source = this.#link(from.targetKey, 'rename', path)
    if (source === undefined) throw expected === undefined ? FsError.notFound('rename', path) : FsError.stale('rename', path, 'gone')
    const node = source.getNode()
    if (!node.isFile() && !node.isDirectory()) throw FsError.notRegularFile('rename', path)
    checkGuard('rename', path, expected, this.#nodeVersion(node))
    const existing = this.#link(to.targetKey, 'rename', to.displayPath)
    const type = node.isFile() ? 'file' : 'directory'
    // `to` became a link to `from` since it was resolved: one file, nothing to move (as core does for one targetKey).
    if (existing === source) return { type, replaced: false, version: this.#nodeVersion(node) }
    if (existing !== undefined) this.#assertReplaceable(existing.getNode(), to.displayPath, overwrite, type)
    // A key naming a link that leads nowhere (a loop, through a file: absent to #link) is still taken: never replaced.
    else if (this.#statOrUndefined(to.targetKey, false)?.isSymbolicLink() === true) {
      throw overwrite === false ? FsError.destinationExists('rename', to.displayPath) : FsError.notRegularFile('rename', to.displayPath)
    }
    // Where a link appeared at `to` since it was resolved, the file it names is replaced and the link stays, as a write does.
    const [fromPath, toPath] = [pathOf(source), existing === undefined ? to.targetKey : pathOf(existing)]
    // Core refused `to` inside `from` by their keys; a link made on the way since could still lead there.
    if (node.isDirectory() && isWithin(fromPath, this.#canonical(toPath, 0))) throw FsError.unsupported('rename', path, 'cannot move a directory into itself')
    const toParent = this.#link(posix.dirname(toPath), 'rename', to.displayPath)
    if (!isWritableDirectory(source.parent) || (toParent !== undefined && !isWritableDirectory(toParent))) throw denied('rename', path)
    const core = this.volume._core
    // The lookups memfs's rename makes (with their access checks), made before anything changes.
    core.getResolvedLinkOrThrow(fromPath, 'rename')
    if (toParent === undefined) this.#makeParents(toPath, to.displayPath)
    core.getLinkParentAsDirOrThrow(toPath, 'rename')
    // memfs's own rename would orphan a replaced file: unlink it first, in the same synchronous step.
    if (existing !== undefined) core.unlink(toPath)
    core.rename(fromPath, toPath)
    // The moved node keeps its inode and generation: its version names the same content under the new name.
    return { type, replaced: existing !== undefined, version: this.#nodeVersion(node) }
  }

  protected override makeDirectory(target: FsTarget): Awaitable<boolean> {
    const node = this.#node(target.targetKey, 'create directory', target.displayPath)
    if (node?.isDirectory() === true) return false
    if (node !== undefined) throw FsError.notDirectory('create directory', target.displayPath)
    try {
      this.volume._core.mkdirp(target.targetKey, 0o777)
    } catch (err) {
      if (codeOf(err) === 'ENOTDIR') throw FsError.notDirectory('create directory', target.displayPath, err)
      throw err
    }
    return true
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    return memfsErrorRow(err)
  }

  /** A rename may replace only a file, only with `overwrite`, and only the version `overwrite` names. */
  #assertReplaceable(existing: MemNode, path: string, overwrite: RenameRequest['overwrite'], type: 'file' | 'directory'): void {
    if (overwrite === false) throw FsError.destinationExists('rename', path)
    if (!existing.isFile()) throw FsError.notRegularFile('rename', path)
    if (type === 'directory') throw FsError.unsupported('rename', path, 'a directory never replaces a file')
    if (overwrite !== true) checkGuard('rename', path, overwrite, this.#nodeVersion(existing))
  }

  /** Creates the missing parents of a rename's destination; a file on the way is `FS_NOT_DIRECTORY`, and nothing is created. */
  #makeParents(key: string, displayPath: string): void {
    try {
      this.volume._core.mkdirp(posix.dirname(key), 0o777)
    } catch (err) {
      if (codeOf(err) === 'ENOTDIR') throw FsError.notDirectory('rename', displayPath, err)
      throw err
    }
  }

  #absolute(path: string, cwd: string | undefined): string {
    if (cwd === undefined && isNormalizedAbsolute(path)) return path
    return posix.resolve(cwd === undefined ? this.cwd : posix.resolve(this.cwd, cwd), path)
  }

  /**
   * Realpath; a missing path keeps its realpathed ancestor plus the missing
   * suffix; a dangling link is followed to the path it names. Lookups go
   * through the Superblock, which answers "absent" without throwing.
   */
  #canonical(abs: string, hops: number): string {
    const found = this.#resolvedLink(abs)
    if (found !== null) return found.getPath() || '/'
    // Walk down from the root by name: one map lookup per segment, recursion only per symlink hop.
    const segments = abs.split('/').filter((s) => s !== '')
    const parts: string[] = []
    let link = this.volume._core.root
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i] as string
      if (!link.getNode().isDirectory()) {
        throw FsError.throughFile('resolve', abs)
      }
      const child = link.getChild(name)
      if (child === undefined) return `/${[...parts, ...segments.slice(i)].join('/')}`
      const node = child.getNode()
      if (node.isSymlink()) {
        if (hops >= MAX_LINK_HOPS) throw FsError.linkLoop('resolve', abs)
        const target = posix.resolve(`/${parts.join('/')}`, node.symlink)
        return this.#canonical(posix.join(target, ...segments.slice(i + 1)), hops + 1)
      }
      parts.push(name)
      link = child
    }
    return `/${parts.join('/')}`
  }

  /** A listed link's identity; a link that cannot be resolved (a loop) is its own path, listed as other. */
  #linkKey(key: string): string {
    try {
      return this.#canonical(key, 0)
    } catch {
      return key
    }
  }

  #resolvedLink(abs: string): ReturnType<Volume['_core']['getResolvedLink']> {
    return this.volume._core.getResolvedLink(abs)
  }

  /** stat/lstat; absent (also through a file or a link loop) is undefined. */
  #statOrUndefined(path: string, follow: boolean): Stats | undefined {
    try {
      return follow ? this.volume.statSync(path) : this.volume.lstatSync(path)
    } catch (err) {
      const code = codeOf(err)
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined
      throw err
    }
  }

  /** The content of a regular file: a view of the node's bytes, valid until the next write to it. */
  #readFile(target: FsTarget, verb: 'read'): Uint8Array {
    const node = this.#node(target.targetKey, verb, target.displayPath)
    if (node === undefined) throw FsError.notFound(verb, target.displayPath)
    if (!node.isFile()) throw FsError.notRegularFile(verb, target.displayPath)
    return bytesOf(node)
  }

  /** The node at a canonical key, as {@link #link} finds it. */
  #node(key: string, verb: FsVerb, path: string): MemNode | undefined {
    return this.#link(key, verb, path)?.getNode()
  }

  /**
   * The link at a canonical key, or undefined when absent (also through a file). A canonical key
   * names no symlink: one met on the way (at any level, the last included) means the model's own
   * concurrent renames (or an embedder's calls) put a link where a directory or file of the key
   * was since it was resolved, and following it could lead out of a sandbox's roots. That is a
   * retryable `FS_IO_ERROR`, nothing read or changed: the hooks check and act in one synchronous
   * run, so no link can appear between this look and their work.
   */
  #link(key: string, verb: FsVerb, path: string): Link | undefined {
    const plain = this.#lookup.find(key)
    if (plain !== undefined) return plain ?? undefined
    let link = this.volume._core.root
    for (const name of key.split('/')) {
      if (name === '') continue
      if (!link.getNode().isDirectory()) return undefined
      const child = link.getChild(name)
      if (child === undefined) return undefined
      if (child.getNode().isSymlink()) {
        if (this.#unfollowable(key)) return undefined
        throw FsError.io(verb, path, 'a directory on its path was replaced while it was in use (by a link?); resolve it again and retry', {
          retryable: true,
        })
      }
      link = child
    }
    return link
  }

  /** Whether `key`'s links can never be followed: a loop, or a text through a file (such a link's key is its own path: absent). */
  #unfollowable(key: string): boolean {
    try {
      this.volume.statSync(key)
      return false
    } catch (err) {
      // A loop, or a link whose text leads through a file: it can never be followed (nothing can be
      // read or written through it), so it leads nowhere: absent.
      return codeOf(err) === 'ELOOP' || codeOf(err) === 'ENOTDIR'
    }
  }

  #info(st: Stats): FsInfo {
    const mtime = Number(st.mtimeMs)
    if (st.isFile()) return { type: 'file', version: this.#version(st), size: Number(st.size), mtime }
    return { type: st.isDirectory() ? 'directory' : 'other', version: this.#version(st), mtime }
  }

  #nodeInfo(node: MemNode): FsInfo {
    const mtime = node.mtime.getTime()
    if (node.isFile()) return { type: 'file', version: this.#nodeVersion(node), size: node.getSize(), mtime }
    return { type: node.isDirectory() ? 'directory' : 'other', version: this.#nodeVersion(node), mtime }
  }

  #version(st: Stats): FsVersion {
    return this.#inoVersion(Number(st.ino))
  }

  #nodeVersion(node: MemNode): FsVersion {
    return this.#inoVersion(node.ino)
  }

  #inoVersion(ino: number): FsVersion {
    let generation = this.#generations.get(ino)
    if (generation === undefined) {
      generation = ++this.#generation
      this.#generations.set(ino, generation)
    }
    return FsVersion(`${ino}:${generation}`)
  }

  /** Stamps the clock's time on a file just written and returns its version. */
  #stamp(node: MemNode | undefined, key: string): FsVersion {
    if (node === undefined) throw FsError.io('write', key, 'the file vanished after its write')
    stampNode(node, new Date(this.#clock()))
    return this.#nodeVersion(node)
  }
}

/**
 * `bytes` in chunks of {@link STREAM_CHUNK}, each a copy made when it is asked for: a chunk is the
 * caller's, who may write into it, and a view would write into the stored file. Taken from the
 * buffer the stream opened on (a later write gives the node a new one), one chunk in memory at a time.
 */
function* chunksOf(bytes: Uint8Array): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += STREAM_CHUNK) yield new Uint8Array(bytes.subarray(at, at + STREAM_CHUNK))
}
