import { FsError, isFsError, type FsErrorCode, type FsVerb } from './errors.js'
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
  /**
   * Confine reads, stats and listings to the roots as well (default true: the fence holds both ways).
   * `false` lets reads pass everywhere; `full-access` mode never confines.
   */
  readonly confineReads?: boolean | undefined
  /**
   * Paths that are never mutated, whatever the mode (`full-access` included), nor anything below them:
   * a harness's own config, a module it loads, a session file. Resolved afresh against the workspace
   * root for every check and compared by identity, so an alias (a symlink, `..`) is caught too.
   */
  readonly protectedPaths?: readonly string[] | undefined
  /**
   * Names that make a path read-only wherever they appear as one of its segments (compared without
   * case): default `['.git']`, whose hooks and config are code. `[]` turns this off.
   */
  readonly protectedNames?: readonly string[] | undefined
}

/** Resolve failures that tell what exists where they happened (a file or a link loop on the way, a directory one may not enter). */
const REVEALING: ReadonlySet<FsErrorCode> = new Set(['FS_NOT_FOUND', 'FS_NOT_DIRECTORY', 'FS_NOT_REGULAR_FILE', 'FS_PERMISSION_DENIED'])

/** How many ancestors of a path that fails to resolve are tried, to tell inside from outside. */
const ANCESTOR_TRIES = 8

/** The default of {@link SandboxOptions.protectedNames}. */
export const DEFAULT_PROTECTED_NAMES: readonly string[] = ['.git']

/**
 * A fence around ANY backend, written as a {@link FileSystemLayer}: core validates
 * and translates once, the fence only maps targets. Every mutation re-resolves its target
 * immediately before the write and requires the fresh target to lie strictly
 * inside a writable root (by the backend's own `contains`), then mutates that
 * fresh target: a symlink swapped in after the caller's `resolve` cannot carry
 * the write out. Denials are `FS_SANDBOX_DENIED`, never confused with the
 * store's own `FS_PERMISSION_DENIED`.
 *
 * Defaults are the safe ones: reads are confined too unless `confineReads: false`, and `.git`
 * ({@link DEFAULT_PROTECTED_NAMES}) and any {@link SandboxOptions.protectedPaths} are read-only in
 * every mode. Widening is explicit: `full-access`, `confineReads: false`, `protectedNames: []`.
 *
 * The fence checks canonical targets; it holds against a process racing it only
 * where the backend binds its I/O to what `resolve` named. The local backend does
 * on Linux (descriptors verified at the canonical path: a directory swapped for a
 * link fails the operation, it never follows it); SFTP re-verifies after the fact
 * and documents the window left; memory and S3 have no concurrent swapper. It is
 * still a policy fence, not a kernel boundary: untrusted code needs OS isolation.
 */
export class SandboxedFileSystem extends FileSystemLayer {
  readonly mode: SandboxMode
  readonly #roots: readonly string[]
  readonly #workspaceRoot: string
  readonly #confineReads: boolean
  readonly #protectedPaths: readonly string[]
  readonly #protectedNames: ReadonlySet<string>

  constructor(inner: FileSystem, options: Readonly<SandboxOptions>) {
    super(inner)
    if (!SANDBOX_MODES.includes(options.mode)) throw new TypeError(`unknown sandbox mode "${String(options.mode)}"`)
    if (typeof options.workspaceRoot !== 'string' || options.workspaceRoot.trim() === '') {
      throw new TypeError('workspaceRoot must be a non-empty path')
    }
    this.mode = options.mode
    this.#workspaceRoot = options.workspaceRoot
    this.#roots = [options.workspaceRoot, ...(options.writableRoots ?? [])]
    this.#confineReads = options.confineReads ?? true
    this.#protectedPaths = options.protectedPaths ?? []
    this.#protectedNames = new Set((options.protectedNames ?? DEFAULT_PROTECTED_NAMES).map((name) => name.toLowerCase()))
  }

  protected override async resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    const base = cwd ?? this.#workspaceRoot
    try {
      return await super.resolvePath(path, base, signal)
    } catch (err) {
      // Where resolution fails tells what exists there (a file on the way, a link loop): outside the
      // confined roots that is not the model's to learn, so the failure becomes a denial there.
      const code = isFsError(err) ? err.code : this.errorRow(err)?.code
      if (!this.#confineReads || this.mode === 'full-access' || code === undefined || !REVEALING.has(code)) throw err
      if (await this.#failsInside(path, base, signal)) throw err
      throw FsError.at('FS_SANDBOX_DENIED', 'resolve', path, 'outside the sandbox roots', { cause: err })
    }
  }

  /**
   * Whether the nearest ancestor of `path` that resolves lies inside a root (so the failure is the
   * model's to see). Bounded: at most {@link ANCESTOR_TRIES} ancestors are tried, then it is not.
   */
  async #failsInside(path: string, base: string, signal: AbortSignal | undefined): Promise<boolean> {
    const roots = await this.#resolvedRoots(signal)
    let rest = path.replace(/\/+$/, '')
    for (let i = 0; i < ANCESTOR_TRIES; i++) {
      const cut = rest.lastIndexOf('/')
      rest = cut > 0 ? rest.slice(0, cut) : cut === 0 ? '/' : '.'
      const ancestor = await this.#resolveOrNone(rest, base, signal)
      if (ancestor !== undefined) return roots.some((root) => this.inner.contains(root, ancestor))
      if (rest === '/' || rest === '.') return false
    }
    return false
  }

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return super.statTarget(await this.#readable(target, 'stat', signal), signal)
  }

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    const base = cwd ?? this.#workspaceRoot
    if (this.#confineReads && this.mode !== 'full-access') await this.#lstatable(path, base, signal)
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
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.at('FS_SANDBOX_DENIED', verb, target.displayPath, `file access denied under ${this.mode} mode${why}`, { cause })
    if (this.mode === 'read-only') throw denied('')
    // In full-access a path that does not resolve now goes to the backend as it is, for the backend's own error.
    const fresh =
      this.mode === 'full-access'
        ? ((await this.#resolveOrNone(target.displayPath, this.#workspaceRoot, signal)) ?? target)
        : await this.#fresh(target, signal, denied)
    await this.#unprotected(target, fresh, verb, signal)
    if (this.mode === 'full-access') return fresh
    const roots = await this.#resolvedRoots(signal)
    const inside = roots.some((root) => root.targetKey !== fresh.targetKey && this.inner.contains(root, fresh))
    if (!inside) throw denied(roots.some((root) => root.targetKey === fresh.targetKey) ? ' (a root itself is not a file)' : '')
    return fresh
  }

  /** Refuses a mutation of a protected path or anything below it, by name or by identity. */
  async #unprotected(target: FsTarget, fresh: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<void> {
    const refuse = (what: string): FsError =>
      FsError.at('FS_SANDBOX_DENIED', verb, target.displayPath, `${what} is read-only to the model in every sandbox mode`)
    // The canonical key too: a link (`gl -> .git`) hides the name from both display paths.
    for (const path of [target.displayPath, fresh.displayPath, fresh.targetKey]) {
      const name = path.split(/[\\/]/).find((segment) => this.#protectedNames.has(segment.toLowerCase()))
      if (name !== undefined) throw refuse(`"${name}"`)
    }
    for (const path of this.#protectedPaths) {
      const guarded = await this.#resolveOrNone(path, this.#workspaceRoot, signal)
      if (guarded !== undefined && this.inner.contains(guarded, fresh)) throw refuse('a protected path of the harness')
    }
  }

  /**
   * Under confined reads, `lstat` may look at a path whose target lies inside, or at a symlink
   * that itself lies inside (its parent directory does) wherever it points: the link is not followed.
   */
  async #lstatable(path: string, base: string, signal: AbortSignal | undefined): Promise<void> {
    const denied = (why: string, cause?: unknown): FsError => FsError.at('FS_SANDBOX_DENIED', 'lstat', path, `outside the sandbox roots${why}`, { cause })
    const roots = await this.#resolvedRoots(signal)
    const inside = async (p: string): Promise<boolean> => {
      const target = await this.#resolveOrNone(p, base, signal)
      return target !== undefined && roots.some((root) => this.inner.contains(root, target))
    }
    if (await inside(path)) return
    // `..` is lexical in resolve: `<path>/..` is the directory holding the link.
    if (!(await inside(`${path.replace(/\/+$/, '')}/..`))) throw denied('')
    const info = await super.lstatPath(path, base, signal)
    if (info?.type !== 'symlink') throw denied('')
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
    const roots = await Promise.all(this.#roots.map((root, i) => this.#resolveOrNone(root, i === 0 ? undefined : this.#workspaceRoot, signal)))
    return roots.filter((root): root is FsTarget => root !== undefined)
  }

  async #resolveOrNone(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
    try {
      return await this.inner.resolve(path, { signal, cwd })
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err
      return undefined
    }
  }
}
