import { FsError, isFsError, type FsVerb } from './errors.js'
import { FileSystem } from './file-system.js'
import type {
  EditOptions,
  FsCapabilities,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsPathInfo,
  FsTarget,
  FsWriteOutcome,
  ResolveOptions,
  SignalOptions,
  WriteOptions,
} from './types.js'

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
 * A fence around ANY backend. Every mutation re-resolves its target
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
export class SandboxedFileSystem extends FileSystem {
  readonly inner: FileSystem
  readonly mode: SandboxMode
  readonly #roots: readonly string[]
  readonly #workspaceRoot: string
  readonly #confineReads: boolean

  constructor(inner: FileSystem, options: Readonly<SandboxOptions>) {
    super()
    if (!SANDBOX_MODES.includes(options.mode)) throw new TypeError(`unknown sandbox mode "${String(options.mode)}"`)
    if (typeof options.workspaceRoot !== 'string' || options.workspaceRoot.trim() === '') {
      throw new TypeError('workspaceRoot must be a non-empty path')
    }
    this.inner = inner
    this.mode = options.mode
    this.#workspaceRoot = options.workspaceRoot
    this.#roots = [options.workspaceRoot, ...(options.writableRoots ?? [])]
    this.#confineReads = options.confineReads ?? false
  }

  get capabilities(): FsCapabilities {
    return this.inner.capabilities
  }

  override resolve(path: string, opts: ResolveOptions = {}): Promise<FsTarget> {
    return this.inner.resolve(path, { ...opts, cwd: opts.cwd ?? this.#workspaceRoot })
  }

  override processPath(target: FsTarget): string {
    return this.inner.processPath(target)
  }

  override fileUrl(target: FsTarget): string {
    return this.inner.fileUrl(target)
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return this.inner.contains(parent, child)
  }

  override async stat(target: FsTarget, opts: SignalOptions = {}): Promise<FsInfo | undefined> {
    return this.inner.stat(await this.#readable(target, 'stat', opts.signal), opts)
  }

  override async lstat(path: string, opts: ResolveOptions = {}): Promise<FsPathInfo | undefined> {
    const cwd = opts.cwd ?? this.#workspaceRoot
    if (this.#confineReads) await this.#readable(await this.inner.resolve(path, { ...opts, cwd }), 'lstat', opts.signal)
    return this.inner.lstat(path, { ...opts, cwd })
  }

  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    return this.inner.readText(await this.#readable(target, 'read', opts.signal), opts)
  }

  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    return this.inner.streamText(await this.#readable(target, 'read', opts.signal), opts)
  }

  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    return this.inner.listDir(await this.#readable(target, 'list', opts.signal), opts)
  }

  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    return this.inner.writeText(await this.#writable(target, 'write', opts.signal), content, opts)
  }

  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    return this.inner.editText(await this.#writable(target, 'edit', opts.signal), edit, opts)
  }

  override close(): Promise<void> {
    return this.inner.close()
  }

  /** The fresh target a mutation may touch, or `FS_SANDBOX_DENIED`. */
  async #writable(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (this.mode === 'full-access') return target
    const denied = (why: string, cause?: unknown): FsError =>
      new FsError('FS_SANDBOX_DENIED', `cannot ${verb} "${target.displayPath}": file access denied under ${this.mode} mode${why}`, {
        cause,
      })
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
      new FsError('FS_SANDBOX_DENIED', `cannot ${verb} "${target.displayPath}": outside the sandbox roots${why}`, { cause })
    const fresh = await this.#fresh(target, signal, denied)
    const roots = await this.#resolvedRoots(signal)
    if (!roots.some((root) => this.inner.contains(root, fresh))) throw denied('')
    return fresh
  }

  /** Re-resolves the target now; a path that no longer resolves cannot be proven inside. */
  async #fresh(
    target: FsTarget,
    signal: AbortSignal | undefined,
    denied: (why: string, cause?: unknown) => FsError,
  ): Promise<FsTarget> {
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
