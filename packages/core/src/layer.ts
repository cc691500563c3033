import { FileSystem } from './file-system.js'
import {
  type Awaitable,
  type ByteChunks,
  type FileSystemHooks,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type TreePages,
  type TreeRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from './hooks.js'
import type { ErrorRow } from './translate.js'
import type { FsCapabilities, FsDirEntry, FsInfo, FsPathInfo, FsRemoveOutcome, FsRenameOutcome, FsTarget, FsVersion } from './types.js'

/**
 * A filesystem that wraps another one (a sandbox, later mounts or read-only views):
 * every hook forwards to the inner filesystem's hook, so validation, abort checks,
 * limits, decoding and error translation run once, in this layer's public methods,
 * and never twice. A layer overrides the hooks it changes and calls `super` for the
 * rest; its limits are the inner filesystem's.
 *
 * `listSubtree` is the one hook not forwarded: a layer lists a tree by walking its own
 * `listEntries` (core's default), so whatever it changes in a listing holds in a tree listing
 * too. A layer that only maps entries may list through the inner filesystem's own tree listing
 * ({@link FileSystemLayer.innerListSubtree}) and map each entry, as the sandbox does.
 */
export abstract class FileSystemLayer extends FileSystem {
  readonly inner: FileSystem
  readonly #hooks: FileSystemHooks

  constructor(inner: FileSystem) {
    super({ maxTextBytes: inner.maxTextBytes, diffBasisMaxBytes: inner.diffBasisMaxBytes, maxRemoveEntries: inner.maxRemoveEntries })
    this.inner = inner
    this.#hooks = FileSystem.hooksOf(inner)
  }

  /** The inner capabilities without `keyBoundReads`, for the inner capabilities object it was made from. */
  #unbound: { readonly from: FsCapabilities; readonly caps: FsCapabilities } | undefined

  /**
   * The inner filesystem's capabilities, but `keyBoundReads`, which holds for a layer only where
   * {@link readsThrough} says so: a layer written before that claim existed (one that maps targets,
   * or reads by another way) must not pass on what its store claims.
   */
  get capabilities(): FsCapabilities {
    const caps = this.inner.capabilities
    if (caps.keyBoundReads !== true || this.readsThrough()) return caps
    if (this.#unbound?.from !== caps) this.#unbound = { from: caps, caps: Object.freeze({ ...caps, keyBoundReads: false }) }
    return this.#unbound.caps
  }

  /**
   * Whether every read of this layer is the inner filesystem's read of the same target, unchanged
   * (the layer only watches: events, spans): then the inner store's `keyBoundReads` holds for the
   * layer too. False by default; a fence is not (it reads where a path leads now).
   */
  protected readsThrough(): boolean {
    return false
  }

  override fileUrl(target: FsTarget): string {
    return this.inner.fileUrl(target)
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return this.inner.contains(parent, child)
  }

  override close(): Promise<void> {
    return this.inner.close()
  }

  protected override processPathOf(target: FsTarget): string {
    return this.inner.processPath(target)
  }

  protected override resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget> {
    return this.#hooks.resolvePath(path, cwd, signal)
  }

  protected override statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined> {
    return this.#hooks.statTarget(target, signal)
  }

  protected override lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined> {
    return this.#hooks.lstatPath(path, cwd, signal)
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    return this.#hooks.loadBytes(target, request)
  }

  protected override openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks> {
    return this.#hooks.openBytes(target, signal)
  }

  protected override openTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<OpenedFile> {
    return this.#hooks.openTarget(target, signal)
  }

  protected override listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]> {
    return this.#hooks.listEntries(target, signal)
  }

  /** The inner filesystem's own `listSubtree` (a prefix listing where it has one), for a layer that maps its entries. */
  protected innerListSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages> {
    return this.#hooks.listSubtree(target, request)
  }

  /** A request's `fence` goes on to an inner filesystem that takes fences; for any other it is awaited first. */
  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult> {
    const { fence } = request
    if (fence === undefined || this.#hooks.takesFence()) return this.#hooks.publishBytes(target, bytes, request)
    return fence.then(() => this.#hooks.publishBytes(target, bytes, { ...request, fence: undefined }))
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion> {
    const { fence } = request
    if (fence === undefined || this.#hooks.takesFence()) return this.#hooks.updateBytes(target, request, transform)
    return fence.then(() => this.#hooks.updateBytes(target, { ...request, fence: undefined }, transform))
  }

  /** Whether the inner filesystem takes fences (see `WriteRequest.fence`). */
  protected innerTakesFence(): boolean {
    return this.#hooks.takesFence()
  }

  protected override removeTarget(target: FsTarget, request: RemoveRequest): Awaitable<FsRemoveOutcome> {
    return this.#hooks.removeTarget(target, request)
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    return this.#hooks.renameTarget(from, to, request)
  }

  protected override prepareRename(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<readonly [FsTarget, FsTarget]> {
    return this.#hooks.prepareRename(from, to, request)
  }

  protected override renameInPlace(target: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    return this.#hooks.renameInPlace(target, request)
  }

  protected override rootTarget(signal: AbortSignal | undefined): Awaitable<FsTarget> {
    return this.#hooks.rootTarget(signal)
  }

  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Awaitable<boolean> {
    return this.#hooks.makeDirectory(target, signal)
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    return this.#hooks.errorRow(err)
  }
}
