import { setMaxListeners } from 'node:events'
import { performance } from 'node:perf_hooks'
import { isPromiseLike, releaseChunks } from './abort-wait.js'
import { FsError, isFsError, type FsErrorCode, type FsVerb } from './errors.js'
import {
  type Awaitable,
  type ByteChunks,
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
import { EXECUTED_NAMES, gitRepositoryAt, repositoryCandidates } from './executes.js'
import { FileSystemLayer } from './layer.js'
import { loadedCodePaths } from './loaded-code.js'
import { isNormalizedAbsolute } from './paths.js'
import { mapPages } from './tree.js'
import type { FileSystem } from './file-system.js'
import type { FsDirEntry, FsInfo, FsPathInfo, FsRemoveOutcome, FsRenameOutcome, FsTarget, FsVersion, SignalOptions } from './types.js'

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
   * Confine reads, stats and listings to the roots as well (default true: the fence holds both ways);
   * a listing inside then shows a link leading out as `other`, without its target's type, size,
   * mtime or version. `false` lets reads pass everywhere; `full-access` mode never confines.
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
   * case): default {@link DEFAULT_PROTECTED_NAMES}, what tools the user runs execute (`.git`,
   * `node_modules`, package-manager config, husky's hooks, the harness config; see `executes.ts`).
   * A list replaces the default: spread `DEFAULT_PROTECTED_NAMES` into it to add names. `[]` turns
   * names off (the rules by kind and identity below still hold).
   */
  readonly protectedNames?: readonly string[] | undefined
  /**
   * Directories git would take for a repository, whatever they are named, keep their metadata
   * read-only (`config`, `hooks`, `HEAD`…), and no mutation may complete one; and where the store
   * is this machine's disk (`capabilities.processPath`), the code of the seamfs packages this
   * process runs is read-only (`loaded-code.ts`). Default true; `false` is an explicit widening.
   */
  readonly protectExecutables?: boolean | undefined
  /**
   * How long (ms) a `resolve` through this sandbox is answered from memory: the same path from the
   * same base resolved successfully this recently costs no request (on a remote store, a round trip
   * of each tool call). Every operation still re-resolves its target freshly behind the fence (sent
   * with the operation itself) and acts on what that finds, so a remembered answer that a change of
   * links has made stale is never acted on; it only decides nothing. Used where the fence checks
   * every operation (`confineReads`, not `full-access`); forgotten on a remove or rename through this
   * sandbox. Default {@link DEFAULT_RESOLVE_MEMORY_MS}; 0 resolves every time.
   */
  readonly resolveMemoryMs?: number | undefined
}

/** What {@link SandboxedFileSystem.describeFence} tells of a fence. */
export interface SandboxFence {
  readonly mode: SandboxMode
  /** Whether reads, stats and listings are confined to the roots (`false` in `full-access`, whatever the options say). */
  readonly confineReads: boolean
  /** The workspace root first, then the writable roots: each as configured, and where it is pinned (`undefined` while it does not resolve). */
  readonly roots: readonly { readonly configured: string; readonly target: FsTarget | undefined }[]
}

/** The default of {@link SandboxOptions.resolveMemoryMs}: one minute. */
export const DEFAULT_RESOLVE_MEMORY_MS = 60_000

/** Resolves remembered at most; a full memory starts over. */
const MAX_REMEMBERED_RESOLVES = 4096

/** Resolve failures that tell what exists where they happened (a file or a link loop on the way, a directory one may not enter). */
const REVEALING: ReadonlySet<FsErrorCode> = new Set(['FS_NOT_FOUND', 'FS_NOT_DIRECTORY', 'FS_NOT_REGULAR_FILE', 'FS_PERMISSION_DENIED'])

/** How many ancestors of a path that fails to resolve are tried, to tell inside from outside. */
const ANCESTOR_TRIES = 8

/** The default of {@link SandboxOptions.protectedNames}: the names of things that execute (`executes.ts`). */
export const DEFAULT_PROTECTED_NAMES: readonly string[] = EXECUTED_NAMES

/**
 * A fence around ANY backend, written as a {@link FileSystemLayer}: core validates
 * and translates once, the fence only maps targets. Every mutation re-resolves its target
 * immediately before the write and requires the fresh target to lie strictly
 * inside a writable root (by the backend's own `contains`), then mutates that
 * fresh target: a symlink swapped in after the caller's `resolve` cannot carry
 * the write out. Denials are `FS_SANDBOX_DENIED`, never confused with the
 * store's own `FS_PERMISSION_DENIED`. Where the target lies inside a root as the caller resolved
 * it, a read (and a write, on a backend that takes fences: `WriteRequest.fence`) is sent together
 * with its re-resolve, so the fence costs no round trip of its own on a remote store: nothing read
 * reaches the caller, and nothing is published, before the fence's verdict; a target that resolves
 * elsewhere now is read or written there, as decided, or refused.
 *
 * Defaults are the safe ones: reads are confined too unless `confineReads: false`, and what tools
 * the user runs execute from the workspace ({@link DEFAULT_PROTECTED_NAMES}, git repositories by
 * kind, the seamfs code this process runs; see `executes.ts`) and any
 * {@link SandboxOptions.protectedPaths} are read-only in every mode. Widening is explicit:
 * `full-access`, `confineReads: false`, `protectedNames: []`, `protectExecutables: false`.
 *
 * The roots are pinned where they first resolve: a root later swapped for a link to elsewhere
 * does not move the fence; paths through it then resolve outside the pin and are refused.
 *
 * The fence checks canonical targets; it holds against a process racing it only
 * where the backend binds its I/O to what `resolve` named. The local backend does
 * on Linux (descriptors verified at the canonical path: a directory swapped for a
 * link fails the operation, it never follows it); SFTP re-verifies after the fact
 * and documents the window left; memory checks every key link by link in the same
 * synchronous run as the operation (the caller's own concurrent renames are a swapper
 * too: a link met on a key's way fails the call, retryable); S3 has no links. It is
 * still a policy fence, not a kernel boundary: untrusted code needs OS isolation.
 */
export class SandboxedFileSystem extends FileSystemLayer {
  readonly mode: SandboxMode
  readonly #roots: readonly string[]
  readonly #workspaceRoot: string
  readonly #confineReads: boolean
  readonly #protectedPaths: readonly string[]
  readonly #protectedNames: ReadonlySet<string>
  readonly #protectExecutables: boolean
  /** The loaded code that lies inside the roots, resolved once ({@link SandboxedFileSystem.#loadedCode}). */
  #loaded: Promise<FsTarget[]> | undefined
  #loadedCount = 0
  /**
   * Remembered resolves by base, then path (see {@link SandboxOptions.resolveMemoryMs}), with when each
   * began (monotonic). Two maps, not one keyed by the joined text: a hit builds and hashes no new string.
   */
  readonly #remembered = new Map<string, Map<string, { readonly target: FsTarget; readonly at: number }>>()
  #rememberedCount = 0
  readonly #resolveMemoryMs: number
  /** How many times the remembered resolves were forgotten. */
  #forgotten = 0
  /** Each root's target once it resolved (see {@link SandboxedFileSystem.#resolvedRoots}). */
  readonly #pins: (Promise<FsTarget | undefined> | undefined)[] = []
  /** Each root's target once its pin resolved to one, and all of them once every root has: pins never move. */
  readonly #pinned: (FsTarget | undefined)[] = []
  #allPinned: FsTarget[] | undefined

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
    this.#protectExecutables = options.protectExecutables ?? true
    const memory = options.resolveMemoryMs ?? DEFAULT_RESOLVE_MEMORY_MS
    if (!Number.isFinite(memory) || memory < 0) throw new RangeError(`resolveMemoryMs must be a finite number ≥ 0, got ${String(memory)}`)
    this.#resolveMemoryMs = this.#confineReads && this.mode !== 'full-access' ? memory : 0
  }

  /** Remembers the resolve of `path` against `base` that began at `at`; past {@link MAX_REMEMBERED_RESOLVES}, all are forgotten first. */
  #remember(base: string, path: string, target: FsTarget, at: number): void {
    if (this.#rememberedCount >= MAX_REMEMBERED_RESOLVES) {
      this.#remembered.clear()
      this.#rememberedCount = 0
    }
    let byPath = this.#remembered.get(base)
    if (byPath === undefined) {
      byPath = new Map()
      this.#remembered.set(base, byPath)
    }
    if (!byPath.has(path)) this.#rememberedCount++
    byPath.set(path, { target, at })
  }

  /** Forgets every remembered resolve, and any still under way (see {@link SandboxOptions.resolveMemoryMs}). */
  #forget(): void {
    this.#forgotten++
    this.#remembered.clear()
    this.#rememberedCount = 0
  }

  /** A resolve remembered ({@link SandboxOptions.resolveMemoryMs}) is answered at once, not through a promise. */
  protected override resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget> {
    const base = cwd ?? this.#workspaceRoot
    const now = performance.now()
    const remembered = this.#remembered.get(base)?.get(path)
    if (remembered !== undefined && now - remembered.at < this.#resolveMemoryMs) return remembered.target
    return this.#resolveFresh(path, base, signal, now)
  }

  async #resolveFresh(path: string, base: string, signal: AbortSignal | undefined, now: number): Promise<FsTarget> {
    const epoch = this.#forgotten
    try {
      const target = await super.resolvePath(path, base, signal)
      // A resolve that a remove or rename overlapped is not remembered.
      if (this.#resolveMemoryMs > 0 && epoch === this.#forgotten) this.#remember(base, path, target, now)
      return target
    } catch (err) {
      // Where resolution fails tells what exists there (a file on the way, a link loop): outside the
      // confined roots that is not the model's to learn, so the failure becomes a denial there.
      const code = isFsError(err) ? err.code : this.errorRow(err)?.code
      if (!this.#confineReads || this.mode === 'full-access' || code === undefined || !REVEALING.has(code)) throw err
      if (await this.#failsInside(path, base, signal)) throw err
      throw FsError.sandboxDenied('resolve', path, `outside the sandbox roots${this.#rootsHint('a path')}`, err)
    }
  }

  /**
   * Whether the nearest ancestor of `path` that resolves lies inside a root (so the failure is the
   * model's to see). Bounded: at most {@link ANCESTOR_TRIES} ancestors are tried, then it is not.
   */
  async #failsInside(path: string, base: string, signal: AbortSignal | undefined): Promise<boolean> {
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
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

  protected override statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined> {
    // Not on the key alone: an absent answer is no failure to fall back on (a link swapped in that leads to nothing).
    return this.#reading(target, 'stat', signal, (at) => super.statTarget(at, signal), undefined, false)
  }

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    const base = cwd ?? this.#workspaceRoot
    if (this.#confineReads && this.mode !== 'full-access') await this.#lstatable(path, base, signal)
    return super.lstatPath(path, base, signal)
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    return this.#reading(target, 'read', request.signal, (at) => super.loadBytes(at, request))
  }

  protected override openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks> {
    // Not sent on the key alone (`keyBoundReads`): a store may open a stream at its first chunk, after the decision.
    return this.#reading(target, 'read', signal, (at) => super.openBytes(at, signal), releaseChunks, false)
  }

  protected override openTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<OpenedFile> {
    return this.#reading(
      target,
      'read',
      signal,
      (at) => super.openTarget(at, signal),
      (opened) => releaseChunks(opened.chunks),
    )
  }

  /**
   * Under confined reads, an entry whose target lies outside the roots (a link leading out) is listed
   * as a broken link is, `other` with its name and target only: never the outside target's type,
   * size, mtime or version, which `stat` of it would refuse.
   */
  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const entries = await this.#reading(target, 'list', signal, (at) => super.listEntries(at, signal))
    if (!this.#confineReads || this.mode === 'full-access') return entries
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
    return entries.map((entry) =>
      roots.some((root) => this.inner.contains(root, entry.target)) ? entry : { name: entry.name, type: 'other', target: entry.target },
    )
  }

  /**
   * A tree listing under the fence. Over a store that lists a subtree at once (`listTree: 'native'`):
   * its listing of the target a read may touch, decided as for `listEntries`, and under confined
   * reads an entry whose target lies outside the roots is `other`, as in a listing. Elsewhere: the
   * directory walk through this layer's own hooks, so every directory is fenced as `listDir` fences it.
   */
  protected override async listSubtree(target: FsTarget, request: TreeRequest): Promise<TreePages> {
    if (this.inner.capabilities.listTree !== 'native') return super.listSubtree(target, request)
    const { signal } = request
    const pages = await this.#reading(target, 'list', signal, (at) => this.innerListSubtree(at, request), releaseChunks, false)
    if (!this.#confineReads || this.mode === 'full-access') return pages
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
    return mapPages(pages, (entry) =>
      roots.some((root) => this.inner.contains(root, entry.target)) ? entry : { name: entry.name, path: entry.path, type: 'other', target: entry.target },
    )
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return this.#writing(target, 'write', request, (at, fence) => super.publishBytes(at, bytes, { ...request, fence }))
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return this.#writing(target, 'edit', request, (at, fence) => super.updateBytes(at, { ...request, fence }, transform))
  }

  /** Takes fences: a write here is handed on with this fence's verdict (and any fence it came with) as its own. */
  protected override takesFence(): boolean {
    return this.innerTakesFence()
  }

  /**
   * A write of `target` under the fence: on the target {@link #writable} decides. Where the inner
   * filesystem takes fences (`WriteRequest.fence`) and the target lies inside a root as the caller
   * resolved it, the write goes at once with the re-resolve as its fence (one round trip on a remote
   * store, not two): it publishes only once the target still resolves to the same key, inside a root
   * and unprotected. A denial is the fence's failure, nothing published; a target that leads
   * elsewhere now is written there, as decided, after the first write failed on its fence.
   */
  async #writing<T>(
    target: FsTarget,
    verb: FsVerb,
    request: { readonly signal: AbortSignal | undefined; readonly fence?: Promise<void> | undefined },
    write: (at: FsTarget, fence: Promise<void> | undefined) => Awaitable<T>,
  ): Promise<T> {
    const { signal, fence: outer } = request
    if (!(await this.#speculative(target, signal))) return write(await this.#writable(target, verb, signal), outer)
    const checking = this.#writable(target, verb, signal)
    const fence = checking.then((fresh) => {
      if (fresh.targetKey !== target.targetKey) throw FsError.io(verb, target.displayPath, 'the path leads elsewhere now', { retryable: true })
    })
    const merged = outer === undefined ? fence : Promise.all([outer, fence]).then(() => undefined)
    merged.catch(() => undefined)
    try {
      return await write(target, merged)
    } catch (err) {
      // The fence decides first: a denial is what the caller is told, whatever the write met.
      const fresh = await checking
      if (fresh.targetKey !== target.targetKey) return write(fresh, outer)
      throw err
    }
  }

  /** Whether a write of `target` may go with its re-resolve: the inner filesystem takes fences, and the target lies inside a writable root unprotected, as resolved. */
  async #speculative(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.mode !== 'workspace-write' || !this.innerTakesFence()) return false
    const named = [target.displayPath, target.targetKey].some((path) => path.split(/[\\/]/).some((segment) => this.#protectedNames.has(segment.toLowerCase())))
    if (named) return false
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
    return roots.some((root) => root.targetKey !== target.targetKey && this.inner.contains(root, target))
  }

  /**
   * A remove needs its target writable; a remove that can take a directory's content (a directory,
   * `recursive`) also needs nothing protected below it: no protected path (nor the directory holding
   * one, for a protected path that is a link) and, for a recursive remove, no protected name.
   */
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    this.#forget()
    try {
      const fresh = await this.#writable(target, 'remove', request.signal)
      await this.#nothingProtectedBelow(target, fresh, { verb: 'remove', walk: request.recursive, signal: request.signal })
      return await super.removeTarget(fresh, request)
    } finally {
      this.#forget()
    }
  }

  /**
   * The store's root as this sandbox sees it: through the fence, so a root the fence keeps from the
   * model is the fence's to refuse (`FS_SANDBOX_DENIED`), and core's root rule applies only to a root
   * the model may otherwise change (full access).
   */
  protected override async rootTarget(signal: AbortSignal | undefined): Promise<FsTarget> {
    return this.#writable(await super.rootTarget(signal), 'remove', signal)
  }

  /**
   * The fence decides a rename before core does: `rename(a, b)` with one key is a no-op, and a `to`
   * inside `from` an error, both decided on the targets returned here, so a `to` that named an inside
   * file when it was resolved and a file outside now (a swapped link, a forged target) is refused
   * first, and the fresh targets are what core compares.
   */
  protected override async prepareRename(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<readonly [FsTarget, FsTarget]> {
    const source = await this.#writable(from, 'rename', request.signal)
    const destination = await this.#writable(to, 'rename', request.signal)
    return [source, destination]
  }

  /**
   * `rename(a, a)` moves nothing, but it is a mutation: the fence decides it as it decides any rename
   * (a read-only mode, a protected path or one outside the roots is refused), on the fresh target.
   */
  protected override async renameInPlace(target: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return super.renameInPlace(await this.#writable(target, 'rename', request.signal), request)
  }

  /**
   * Both ends of a rename must be writable; a directory moved takes nothing protected with it (paths
   * and names, walked as for a recursive remove), and lands on no protected path, existing or not.
   * The fresh targets decide: two that name one file now (a link swapped since they were resolved)
   * move nothing, and a destination now inside the source is refused.
   */
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    this.#forget()
    try {
      return await this.#rename(from, to, request)
    } finally {
      this.#forget()
    }
  }

  async #rename(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const source = await this.#writable(from, 'rename', request.signal)
    const destination = await this.#writable(to, 'rename', request.signal)
    if (source.targetKey === destination.targetKey) return super.renameInPlace(source, request)
    if (this.inner.contains(source, destination)) {
      throw FsError.unsupported('rename', from.displayPath, `cannot move a directory into itself ("${to.displayPath}")`)
    }
    await this.#nothingProtectedBelow(from, source, { verb: 'rename', walk: true, signal: request.signal })
    await this.#nothingProtectedBelow(to, destination, { verb: 'rename', walk: false, signal: request.signal })
    return super.renameTarget(source, destination, request)
  }

  protected override async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return super.makeDirectory(await this.#writable(target, 'create directory', signal), signal)
  }

  /**
   * Refuses a mutation that would take away (or, at a destination, put something on) a protected
   * path lying at or below `fresh`: by identity, and by the directory holding it (a protected path
   * that is a link goes with its directory, wherever it points). With `walk`, the tree below is
   * walked for protected names, links never followed; a tree too large to walk, or a directory that
   * cannot be listed, is refused rather than passed unchecked.
   */
  async #nothingProtectedBelow(
    target: FsTarget,
    fresh: FsTarget,
    { verb, walk, signal }: { readonly verb: FsVerb; readonly walk: boolean; readonly signal: AbortSignal | undefined },
  ): Promise<void> {
    const refuse = (what: string): FsError =>
      FsError.sandboxDenied(verb, target.displayPath, `${what} below it is read-only to the model in every sandbox mode`)
    for (const path of this.#protectedPaths) {
      const guarded = await this.#resolveOrNone(path, this.#workspaceRoot, signal)
      const holder = await this.#resolveOrNone(`${path.replace(/\/+$/, '')}/..`, this.#workspaceRoot, signal)
      if ([guarded, holder].some((t) => t !== undefined && this.inner.contains(fresh, t))) throw refuse('a protected path of the harness')
    }
    for (const code of await this.#loadedCode(signal)) if (this.inner.contains(fresh, code)) throw refuse('code of seamfs that this process runs')
    if (walk && this.#protectedNames.size > 0) await this.#walkForProtectedNames(fresh, refuse, signal)
  }

  /**
   * Every entry below `root`, through the inner store's tree listing (its prefix listing where it has
   * one; links listed, never followed), bounded like a recursive remove. A tree that cannot be listed
   * is refused rather than passed unchecked.
   */
  async #walkForProtectedNames(root: FsTarget, refuse: (what: string) => FsError, signal: AbortSignal | undefined): Promise<void> {
    const unchecked = (err: unknown): FsError => {
      if (isFsError(err, 'FS_ABORTED')) return err
      const path = isFsError(err) && err.path !== undefined ? err.path : root.displayPath
      return FsError.sandboxDenied('list', path, 'cannot check it for protected names', err)
    }
    let pages: TreePages
    try {
      pages = await this.innerListSubtree(root, { signal, prune: new Set() })
    } catch (err) {
      const code = isFsError(err) ? err.code : this.errorRow(err)?.code
      // A file has no entries, and a directory gone meanwhile holds none: the mutation reports what it finds.
      if (code === 'FS_NOT_DIRECTORY' || code === 'FS_NOT_FOUND' || code === 'FS_NOT_REGULAR_FILE') return
      throw unchecked(err)
    }
    let seen = 0
    let found: FsError | undefined
    try {
      for await (const page of pages) {
        for (const entry of page) {
          if (++seen > this.maxRemoveEntries) found = FsError.tooManyEntries('remove', root.displayPath, seen, this.maxRemoveEntries)
          else if (this.#protectedNames.has(entry.name.toLowerCase())) found = refuse(`"${entry.name}"`)
          if (found !== undefined) break
        }
        if (found !== undefined) break
      }
    } catch (err) {
      throw unchecked(err)
    }
    if (found !== undefined) throw found
  }

  /** The fresh target a mutation may touch, or `FS_SANDBOX_DENIED`. */
  async #writable(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.sandboxDenied(verb, target.displayPath, `file access denied under ${this.mode} mode${why}`, cause)
    if (this.mode === 'read-only') throw denied(' (this session cannot change files)')
    // In full-access a path that does not resolve now goes to the backend as it is, for the backend's own error.
    const fresh =
      this.mode === 'full-access'
        ? ((await this.#resolveOrNone(target.displayPath, this.#workspaceRoot, signal)) ?? target)
        : await this.#fresh(target, signal, denied)
    await this.#unprotected(target, fresh, verb, signal)
    if (this.mode === 'full-access') return fresh
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
    const inside = roots.some((root) => root.targetKey !== fresh.targetKey && this.inner.contains(root, fresh))
    if (!inside) throw denied(roots.some((root) => root.targetKey === fresh.targetKey) ? ' (a root itself is not a file)' : this.#rootsHint('changes'))
    return fresh
  }

  /** Refuses a mutation of a protected path or anything below it, by name or by identity. */
  async #unprotected(target: FsTarget, fresh: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<void> {
    const refuse = (what: string): FsError => FsError.sandboxDenied(verb, target.displayPath, `${what} is read-only to the model in every sandbox mode`)
    // The canonical key too: a link (`gl -> .git`) hides the name from both display paths.
    for (const path of [target.displayPath, fresh.displayPath, fresh.targetKey]) {
      const name = path.split(/[\\/]/).find((segment) => this.#protectedNames.has(segment.toLowerCase()))
      if (name !== undefined) throw refuse(`"${name}"`)
    }
    for (const path of this.#protectedPaths) {
      const guarded = await this.#resolveOrNone(path, this.#workspaceRoot, signal)
      if (guarded !== undefined && this.inner.contains(guarded, fresh)) throw refuse('a protected path of the harness')
    }
    if (!this.#protectExecutables) return
    for (const code of await this.#loadedCode(signal)) if (this.inner.contains(code, fresh)) throw refuse('code of seamfs that this process runs')
    // A path named like repository metadata: its directory must not be (nor become) a repository.
    const typeOf = async (path: string): Promise<'file' | 'directory' | 'symlink' | 'other' | undefined> => {
      try {
        return (await super.lstatPath(path, this.#workspaceRoot, signal))?.type
      } catch {
        // Not there to see (a path through a file, a directory one may not enter): not a marker.
        return undefined
      }
    }
    // Each path on its own: through a link, the canonical key names the repository the display path hides.
    const adds = verb !== 'remove'
    const candidates = [...repositoryCandidates([fresh.displayPath], adds), ...repositoryCandidates([fresh.targetKey], adds)]
    for (const { dir, adding } of candidates) {
      if (await gitRepositoryAt(dir, adding, typeOf)) {
        const what =
          adding === undefined
            ? 'the metadata of a git repository (git runs its config and hooks)'
            : 'what would make a git repository here (git would run its config and hooks)'
        throw refuse(what)
      }
    }
  }

  /**
   * The code of the seamfs packages this process runs (`loaded-code.ts`) that lies inside a root, as
   * targets: resolved once, where the store is this machine's disk; none elsewhere.
   */
  #loadedCode(signal: AbortSignal | undefined): Promise<FsTarget[]> {
    if (!this.#protectExecutables || this.inner.capabilities.processPath !== true) return Promise.resolve([])
    const paths = loadedCodePaths()
    // A package loaded since (a lazy import) is added: resolved again, once per change.
    if (paths.length !== this.#loadedCount) this.#loaded = undefined
    this.#loadedCount = paths.length
    if (this.#loaded !== undefined) return this.#loaded
    const loading = (async () => {
      const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
      // One signal for the batch, as many listeners as it needs: the loaded packages outnumber Node's
      // warning threshold (10) in a process that loads most of seamfs, and a warning is no leak here.
      const batch = new AbortController()
      setMaxListeners(0, batch.signal)
      const onAbort = (): void => batch.abort(signal?.reason)
      if (signal?.aborted === true) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
      let found: (FsTarget | undefined)[]
      try {
        found = await Promise.all(paths.map((path) => this.#resolveOrNone(path, this.#workspaceRoot, batch.signal)))
      } finally {
        signal?.removeEventListener('abort', onAbort)
      }
      return found.filter((t): t is FsTarget => t !== undefined && roots.some((root) => this.inner.contains(root, t)))
    })()
    // A failure (an abort) is not remembered: the next mutation resolves them again.
    loading.catch(() => {
      if (this.#loaded === loading) this.#loaded = undefined
    })
    this.#loaded = loading
    return loading
  }

  /**
   * Under confined reads, `lstat` may look at a path whose target lies inside, or at a symlink
   * that itself lies inside (its parent directory does) wherever it points: the link is not followed.
   */
  async #lstatable(path: string, base: string, signal: AbortSignal | undefined): Promise<void> {
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.sandboxDenied('lstat', path, `outside the sandbox roots${why}${this.#rootsHint('a path')}`, cause)
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
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

  /**
   * A read of `target` under the fence: `read` on the target a read may touch ({@link #readable}).
   * Where the target lies inside a root as the caller resolved it, the read is sent together with
   * the re-resolve that decides (one round trip on a remote store, not two), and its answer is used
   * only when the target still resolves to the same key inside a root; otherwise it is dropped
   * (`drop` releases what it opened) and the read goes as decided, on the fresh target or not at all.
   * Nothing read reaches the caller before the fence's verdict. Over a store whose reads are bound to
   * the key (`capabilities.keyBoundReads`), with `onKey`, a target inside named by its own key is read
   * with no re-resolve: the store reads only what the key names, which is what the path names.
   */
  #reading<T>(
    target: FsTarget,
    verb: FsVerb,
    signal: AbortSignal | undefined,
    read: (at: FsTarget) => Awaitable<T>,
    drop?: (value: T) => unknown,
    onKey = true,
  ): Awaitable<T> {
    if (!this.#confineReads || this.mode === 'full-access') return read(target)
    const pinned = this.#allPinned
    if (pinned === undefined) return this.#resolvedRoots(signal).then((roots) => this.#readingIn(roots, target, verb, signal, read, drop, onKey))
    return this.#readingIn(pinned, target, verb, signal, read, drop, onKey)
  }

  /**
   * {@link #reading} once the roots are known. The read on the key answers as the store does: a
   * store that answers at once (a small local file) is not made to answer through a promise.
   */
  #readingIn<T>(
    roots: readonly FsTarget[],
    target: FsTarget,
    verb: FsVerb,
    signal: AbortSignal | undefined,
    read: (at: FsTarget) => Awaitable<T>,
    drop: ((value: T) => unknown) | undefined,
    onKey: boolean,
  ): Awaitable<T> {
    if (!roots.some((root) => this.inner.contains(root, target))) return this.#readable(target, verb, signal).then(read)
    if (onKey && this.inner.capabilities.keyBoundReads === true && target.displayPath === target.targetKey && isNormalizedAbsolute(target.targetKey)) {
      // The key is inside and the store reads only what the key names now (`keyBoundReads`); a
      // forged relative key is not taken (`contains` and the store could take it against other bases); a
      // target named by its own key is what its path names whenever such a read succeeds. A read
      // that fails is decided the full way, as if it had not been tried.
      const decide = (err: unknown): Promise<T> => {
        if (signal?.aborted === true) throw err
        return this.#checked(target, verb, signal, read, drop)
      }
      let answer: Awaitable<T>
      try {
        answer = read(target)
      } catch (err) {
        return decide(err)
      }
      return isPromiseLike(answer) ? Promise.resolve(answer).catch(decide) : answer
    }
    return this.#checked(target, verb, signal, read, drop)
  }

  /** {@link #reading} of a target inside a root: sent together with the re-resolve that decides. */
  async #checked<T>(
    target: FsTarget,
    verb: FsVerb,
    signal: AbortSignal | undefined,
    read: (at: FsTarget) => Awaitable<T>,
    drop: ((value: T) => unknown) | undefined,
  ): Promise<T> {
    const reading = Promise.resolve().then(() => read(target))
    const [checked, answered] = await Promise.allSettled([this.#readable(target, verb, signal), reading])
    const dropAnswer = (): void => {
      if (answered.status === 'fulfilled' && drop !== undefined) void Promise.resolve(drop(answered.value)).catch(() => undefined)
    }
    if (checked.status === 'rejected') {
      dropAnswer()
      throw checked.reason
    }
    if (checked.value.targetKey !== target.targetKey) {
      dropAnswer()
      return read(checked.value)
    }
    if (answered.status === 'rejected') throw answered.reason
    return answered.value
  }

  /** The target a read may touch: unchanged, unless reads are confined. */
  async #readable(target: FsTarget, verb: FsVerb, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (!this.#confineReads || this.mode === 'full-access') return target
    const denied = (why: string, cause?: unknown): FsError =>
      FsError.sandboxDenied(verb, target.displayPath, `outside the sandbox roots${why}${this.#rootsHint('a path')}`, cause)
    const fresh = await this.#fresh(target, signal, denied)
    const roots = this.#allPinned ?? (await this.#resolvedRoots(signal))
    if (!roots.some((root) => this.inner.contains(root, fresh))) throw denied('')
    return fresh
  }

  /**
   * What a denial for lying outside tells the model to do: where `what` (a path, changes) may go,
   * naming the roots as they were pinned (as configured, and said to be missing, before they first resolve).
   */
  #rootsHint(what: 'a path' | 'changes'): string {
    // A root that does not resolve (yet) is named as configured, and said to be missing.
    const names = this.#roots.map((configured, i) => {
      const pinned = this.#pinned[i]
      return pinned === undefined ? `"${configured}" (not found)` : `"${pinned.displayPath}"`
    })
    const where = names.length === 1 ? `under ${names[0]}` : names.length === 2 ? `under ${names[0]} or ${names[1]}` : `under one of ${names.join(', ')}`
    return what === 'a path' ? `; use a path ${where}` : `; changes must lie ${where}`
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
   * The workspace root's target, pinned where it first resolved (as every check uses it); a root
   * that does not resolve yet is `FS_NOT_FOUND`, and is tried again on the next call.
   */
  async workspaceRootTarget(opts: SignalOptions = {}): Promise<FsTarget> {
    const root = await this.#rootFor(0, opts?.signal)
    if (root === undefined) throw FsError.notFound('resolve', this.#workspaceRoot)
    return root
  }

  /**
   * The fence as it stands, read-only, for telling a model where it may work: the mode, whether
   * reads are confined (never in `full-access`), and the roots — the workspace root first, then the
   * writable roots — each as configured and where it is pinned (as every check uses it; `undefined`
   * while it does not resolve, and is tried again on the next call). Pins a root that has not
   * resolved yet, as any check would; changes nothing else. Protected paths and names are not told.
   */
  async describeFence(opts: SignalOptions = {}): Promise<SandboxFence> {
    const targets = await Promise.all(this.#roots.map((_, i) => this.#rootFor(i, opts.signal)))
    return {
      mode: this.mode,
      confineReads: this.#confineReads && this.mode !== 'full-access',
      roots: this.#roots.map((configured, i) => ({ configured, target: targets[i] })),
    }
  }

  /**
   * The roots, each pinned where it first resolved (resolved afresh for every check, a root swapped
   * for a link to elsewhere would move the fence with it).
   * A pinned root never moves: after such a swap, paths through the root resolve outside the pin
   * and are refused. A root that does not resolve yet (created later) matches nothing and is tried
   * again at the next check. The workspace root resolves against the backend's cwd (as `resolve`
   * does), the others against the workspace root.
   */
  async #resolvedRoots(signal: AbortSignal | undefined): Promise<FsTarget[]> {
    const roots = await Promise.all(this.#roots.map((_, i) => this.#rootFor(i, signal)))
    return roots.filter((root): root is FsTarget => root !== undefined)
  }

  /**
   * Root `i` for a caller: a pin other callers' aborts cut short is tried again under this caller's
   * signal, as often as they abort (each retry needs another caller's abort; this one's ends it).
   */
  async #rootFor(i: number, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
    for (;;) {
      try {
        return await this.#pinnedRoot(i, signal)
      } catch (err) {
        if (signal?.aborted === true || !isFsError(err, 'FS_ABORTED')) throw err
      }
    }
  }

  /** Root `i`, resolved once; a failed resolution is forgotten so that the next check tries again. */
  #pinnedRoot(i: number, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
    const known = this.#pins[i]
    if (known !== undefined) return known
    const pending = i === 0 ? this.#resolveOrNone(this.#workspaceRoot, undefined, signal) : this.#resolveBeside(this.#roots[i] as string, signal)
    this.#pins[i] = pending
    const forget = (): void => {
      if (this.#pins[i] === pending) this.#pins[i] = undefined
    }
    pending.then((root) => {
      if (root === undefined) return forget()
      this.#pinned[i] = root
      const all = this.#roots.map((_, k) => this.#pinned[k])
      if (all.every((r) => r !== undefined)) this.#allPinned = all
    }, forget)
    return pending
  }

  /**
   * A further root, resolved against the workspace root only while that still resolves where it
   * was pinned: a root first resolving after the workspace root was swapped for a link would
   * otherwise be pinned through the link, outside. Until then it matches nothing.
   */
  async #resolveBeside(path: string, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
    const workspace = await this.#rootFor(0, signal)
    if (workspace !== undefined) {
      const now = await this.#resolveOrNone(this.#workspaceRoot, undefined, signal)
      if (now?.targetKey !== workspace.targetKey) return undefined
    }
    return this.#resolveOrNone(path, this.#workspaceRoot, signal)
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
