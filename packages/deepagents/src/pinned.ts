import {
  FsError,
  type FileSystem,
  type FsDirEntry,
  type FsInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type FsVersion,
} from '@seamfs/core'
import {
  FileSystemLayer,
  type ByteChunks,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'

/**
 * The agent's root pinned where it first resolved: every hook that touches a target (a read, a
 * listing, a stat, every mutation, each step of the tools' walks) refuses one that does not lie
 * at or below that pin (`FS_SANDBOX_DENIED`). The `SandboxedFileSystem` above pins its roots the
 * same way; this layer stays as a second fence under it, and gives the scope the root's target.
 * The sandbox passes each hook the target it resolved afresh.
 */
export class PinnedRoot extends FileSystemLayer {
  readonly root: string
  #pin: Promise<FsTarget> | undefined

  constructor(inner: FileSystem, root: string) {
    super(inner)
    this.root = root
  }

  /** The root's target, resolved once (again after a failure, e.g. a root created late). */
  pin(signal: AbortSignal | undefined): Promise<FsTarget> {
    const pending = (this.#pin ??= this.inner.resolve('.', { cwd: this.root, signal }))
    pending.catch(() => {
      if (this.#pin === pending) this.#pin = undefined
    })
    return pending
  }

  /** `target`, when it lies at or below the pinned root; else `FS_SANDBOX_DENIED`. */
  async #inside(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (!this.inner.contains(await this.pin(signal), target)) throw FsError.at('FS_SANDBOX_DENIED', verb, target.displayPath, "outside the agent's root")
    return target
  }

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return super.statTarget(await this.#inside(target, 'stat', signal), signal)
  }

  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return super.loadBytes(await this.#inside(target, 'read', request.signal), request)
  }

  protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    return super.openBytes(await this.#inside(target, 'read', signal), signal)
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    return super.listEntries(await this.#inside(target, 'list', signal), signal)
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return super.publishBytes(await this.#inside(target, 'write', request.signal), bytes, request)
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return super.updateBytes(await this.#inside(target, 'edit', request.signal), request, transform)
  }

  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return super.removeTarget(await this.#inside(target, 'remove', request.signal), request)
  }

  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    await this.#inside(from, 'rename', request.signal)
    return super.renameTarget(from, await this.#inside(to, 'rename', request.signal), request)
  }

  protected override async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return super.makeDirectory(await this.#inside(target, 'create directory', signal), signal)
  }
}
