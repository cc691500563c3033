import { FsError, isFsError, type FsVerb } from './errors.js'
import type { ByteChunks, ReadRequest, UpdateRequest, WriteRequest, WriteResult } from './file-system.js'
import { FileSystemLayer } from './layer.js'
import type { FileSystem } from './file-system.js'
import type { FsDirEntry, FsInfo, FsPathInfo, FsTarget, FsVersion } from './types.js'

/** `read-only`: no mutation; `workspace-write`: mutations inside the writable roots; `full-access`: no fence. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access'

export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full-access']

/** Options of {@link SandboxedFileSystem}. */
export interface SandboxOptions {
  readonly mode: SandboxMode
  /** The workspace: the first writable root, and the base of relative paths. */
  readonly workspaceRoot: string
  /** More directories mutations may land in (in `workspace-write`). */
  readonly writableRoots?: readonly string[] | undefined
  /** Confine reads, stats and listings to the roots as well (default: reads pass everywhere). */
  readonly confineReads?: boolean | undefined
}

/**
 * A fence around ANY backend, written as a {@link FileSystemLayer}: core validates
 * and translates once, the fence only maps targets. Every mutation re-resolves its target
 * immediately before the write and requires the fresh target to lie strictly
 * inside a writable root (by the backend's own `contains`), then mutates that
 * fresh target: a symlink swapped in after the caller's `resolve` cannot carry
 * the write out. Denials are `FS_SANDBOX_DENIED`, never confused with the
 * store's own `FS_PERMISSION_DENIED`.
 *
 * This is a policy fence, not a kernel boundary: between the fresh resolve and
 * the backend's write a local attacker could still swap a link. Untrusted code
 * needs OS isolation; this keeps a model's paths where they belong.
 */
export class SandboxedFileSystem extends FileSystemLayer {
  readonly mode: SandboxMode
  readonly #roots: readonly string[]
  readonly #workspaceRoot: string
  readonly #confineReads: boolean

  constructor(inner: FileSystem, options: Readonly<SandboxOptions>) {
    super(inner)
    if (!SANDBOX_MODES.includes(options.mode)) throw new TypeError(`unknown sandbox mode "${String(options.mode)}"`)
    if (typeof options.workspaceRoot !== 'string' || options.workspaceRoot.trim() === '') {
      throw new TypeError('workspaceRoot must be a non-empty path')
    }
    this.mode = options.mode
    this.#workspaceRoot = options.workspaceRoot
    this.#roots = [options.workspaceRoot, ...(options.writableRoots ?? [])]
    this.#confineReads = options.confineReads ?? false
  }

  protected override resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    return super.resolvePath(path, cwd ?? this.#workspaceRoot, signal)
  }

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return super.statTarget(await this.#readable(target, 'stat', signal), signal)
  }

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    const base = cwd ?? this.#workspaceRoot
    if (this.#confineReads) await this.#readable(await this.inner.resolve(path, { cwd: base, signal }), 'lstat', signal)
    return super.lstatPath(path, base, signal)
  }

  protected override async readBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return super.readBytes(await this.#readable(target, 'read', request.signal), request)
  }

  protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    return super.openBytes(await this.#readable(target, 'read', signal), signal)
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    return super.listEntries(await this.#readable(target, 'list', signal), signal)
  }

  protected override async writeBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return super.writeBytes(await this.#writable(target, 'write', request.signal), bytes, request)
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return super.updateBytes(await this.#writable(target, 'edit', request.signal), request, transform)
  }

  /** The fresh target a mutation may touch, or `FS_SANDBOX_DENIED`. */
  async #writable(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (this.mode === 'full-access') return target
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.at('FS_SANDBOX_DENIED', verb, target.displayPath, `file access denied under ${this.mode} mode${why}`, { cause })
    if (this.mode === 'read-only') throw denied('')
    const fresh = await this.#fresh(target, signal, denied)
    const roots = await this.#resolvedRoots(signal)
    const inside = roots.some((root) => root.targetKey !== fresh.targetKey && this.inner.contains(root, fresh))
    if (!inside) throw denied(roots.some((root) => root.targetKey === fresh.targetKey) ? ' (a root itself is not a file)' : '')
    return fresh
  }

  /** The target a read may touch: unchanged, unless reads are confined. */
  async #readable(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (!this.#confineReads || this.mode === 'full-access') return target
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.at('FS_SANDBOX_DENIED', verb, target.displayPath, `outside the sandbox roots${why}`, { cause })
    const fresh = await this.#fresh(target, signal, denied)
    const roots = await this.#resolvedRoots(signal)
    if (!roots.some((root) => this.inner.contains(root, fresh))) throw denied('')
    return fresh
  }

  /** Re-resolves the target now; a path that no longer resolves cannot be proven inside. */
  async #fresh(target: FsTarget, signal: AbortSignal | undefined, denied: (why: string, cause?: unknown) => FsError): Promise<FsTarget> {
    try {
      return await this.inner.resolve(target.displayPath, { signal, cwd: this.#workspaceRoot })
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err
      throw denied(' (it no longer resolves)', err)
    }
  }

  /**
   * The roots, resolved afresh for every check: a root that is a symlink is followed as it is now.
   * The workspace root resolves against the backend's cwd (as `resolve` does), the others against
   * the workspace root; a root that cannot be resolved matches nothing.
   */
  async #resolvedRoots(signal: AbortSignal | undefined): Promise<FsTarget[]> {
    const roots = await Promise.all(
      this.#roots.map(async (root, i) => {
        try {
          return await this.inner.resolve(root, { signal, cwd: i === 0 ? undefined : this.#workspaceRoot })
        } catch (err) {
          if (isFsError(err, 'FS_ABORTED')) throw err
          return undefined
        }
      }),
    )
    return roots.filter((root): root is FsTarget => root !== undefined)
  }
}
