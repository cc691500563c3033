import { FileSystem } from './file-system.js'
import {
  type Awaitable,
  type ByteChunks,
  type FileSystemHooks,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
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
 */
export abstract class FileSystemLayer extends FileSystem {
  readonly inner: FileSystem
  readonly #hooks: FileSystemHooks

  constructor(inner: FileSystem) {
    super({ maxTextBytes: inner.maxTextBytes, diffBasisMaxBytes: inner.diffBasisMaxBytes, maxRemoveEntries: inner.maxRemoveEntries })
    this.inner = inner
    this.#hooks = FileSystem.hooksOf(inner)
  }

  get capabilities(): FsCapabilities {
    return this.inner.capabilities
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

  protected override listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]> {
    return this.#hooks.listEntries(target, signal)
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult> {
    return this.#hooks.publishBytes(target, bytes, request)
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion> {
    return this.#hooks.updateBytes(target, request, transform)
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
