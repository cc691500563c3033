import { isAbsolute, posix, relative, sep } from 'node:path'
import { FsError, type FsVerb } from './errors.js'
import { FileSystem } from './file-system.js'
import {
  type ByteChunks,
  type FileSystemHooks,
  type FsLimits,
  type Awaitable,
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
import {
  childOf,
  lexicallyWithin,
  mountCwd,
  mountUrl,
  parseMounts,
  readOnlyReach,
  restOf,
  routeIndex,
  weakestCapabilities,
  type MountEntry,
  type MountOverlap,
  type MountSpec,
} from './mount-table.js'
import { translateError } from './translate.js'
import {
  FsTargetKey,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsTreeEntry,
  type FsVersion,
  type SignalOptions,
} from './types.js'

/** Options of {@link MountFileSystem}: its own size limits (core enforces them on its public methods) and its cwd. */
export interface MountOptions extends FsLimits {
  /** The cwd in mount space, the base of relative paths (default `/`). */
  readonly cwd?: string | undefined
}

/** Options of {@link MountFileSystem.overlaps}. */
export interface OverlapOptions extends SignalOptions {
  /**
   * Whether two mounts whose stores cannot be told apart by their roots alone may still be one store
   * (an SFTP server that is this machine, or one server under two names): their roots are then
   * compared by path, and an overlap is `possible`. Default: never.
   */
  readonly mayShare?: ((a: MountEntry, b: MountEntry) => boolean) | undefined
}

/** Where a mount's root is: a path of this machine's disk, or its store's URL (origin: scheme and host; path: decoded). */
type Place =
  | { readonly disk: true; readonly root: string }
  | { readonly disk: false; readonly root: string; readonly origin: string; readonly host: string; readonly path: string }

/** The path functions `segmentsBelow` needs: this platform's, or POSIX's for URL paths. */
type PathRules = Pick<typeof posix, 'relative' | 'sep' | 'isAbsolute'>
const NATIVE: PathRules = { relative, sep, isAbsolute }

/** The segments of `child` below `parent` (`[]`: the same), or undefined when it is not below. */
const segmentsBelow =
  (p: PathRules) =>
  (parent: string, child: string): string[] | undefined => {
    const rel = p.relative(parent, child)
    if (rel === '') return []
    return rel === '..' || rel.startsWith(`..${p.sep}`) || p.isAbsolute(rel) ? undefined : rel.split(p.sep)
  }

/** A mount with its index (the prefix of its target keys) and the hooks of its filesystem. */
interface Mount extends MountEntry {
  readonly index: number
  readonly hooks: FileSystemHooks
  /** Whether `fileUrl` may use the filesystem's own URL (no other mount has a filesystem of its class). */
  readonly ownUrls: boolean
}

/** Where a target lives: its mount, and the target its filesystem minted. */
interface Located {
  readonly mount: Mount
  readonly inner: FsTarget
}

/**
 * A filesystem that routes to several filesystems by mount point: a workspace on local disk at `/`,
 * memories in S3 at `/memories`, read-only docs at `/docs`. Policy, sandbox and tools work above it
 * unchanged. The rules of this layer:
 * - mount points are absolute, normalized POSIX paths (`/`, `/memories`); `/` is required; a point that is
 *   not normalized, is given twice, or holds a NUL is a `TypeError` at construction;
 * - a path is normalized lexically in mount space first (`.`, `..`, against `cwd`), so `..` crosses mount
 *   points lexically (`/memories/../x` is `/x` in the `/` store); it is then routed to the longest mount point
 *   that is a whole-segment prefix (`/mem` never routes `/memories/x`);
 * - inside a mount, the rest of the path is resolved by that filesystem relative to its own cwd (the
 *   mount's root); symlinks are that filesystem's business;
 * - a target's `displayPath` is its normalized mount-space path, its `targetKey` `<mount index>:<inner key>`
 *   (aliases inside one store share it); a target this layer did not mint (a copy) is resolved again by its
 *   `displayPath`;
 * - every hook forwards to the mounted filesystem's hook with its own target, so validation and decoding run
 *   once; foreign errors are translated by that filesystem's error table;
 * - a listing merges the store's entries with the mount points directly below the directory (as directories
 *   whose target is the mount's root; a mount point shadows a store entry of the same name); `stat` of a mount
 *   point is its store's root. A mount point whose parent directory exists in no store is reachable by path only;
 * - a mount point cannot be removed or renamed, nor a directory with a mount point below it
 *   (`FS_PERMISSION_DENIED`, nothing changed); a rename between two mounts is `FS_UNSUPPORTED`;
 * - below a read-only mount every mutation (write, edit, remove, rename at either end, createDirectory) is
 *   `FS_PERMISSION_DENIED` ("read-only mount") before any I/O: a property of the store as mounted, like
 *   `EROFS`, not the model's policy (that is the sandbox's `FS_SANDBOX_DENIED`);
 * - `contains` within one mount is that filesystem's; across mounts it is lexical (the parent's `displayPath`
 *   holds the child's mount point) and holds only for a child inside its mount's root: a link in a mounted
 *   store that leads out of that store's root is outside every directory of the mount space;
 * - `capabilities` are the weakest over all mounts (see `weakestCapabilities`); `capabilitiesAt(target)` gives the
 *   store's own. Core checks the former, so an operation one mount lacks is `FS_UNSUPPORTED` on every mount
 *   (a directory rename too, where one mount cannot move directories), and `processPath` works only where
 *   every mount has process paths;
 * - `fileUrl` is the filesystem's own URL where no other mount has a filesystem of its class, else
 *   `seamfs-mount:<percent-encoded displayPath>`;
 * - `close()` closes every mounted filesystem once (one mounted twice closes once);
 * - one filesystem mounted both read-only and writable is a `TypeError` at construction (its files would be
 *   both); stores that overlap otherwise (a writable mount of a directory holding a read-only one) are found
 *   by {@link MountFileSystem.overlaps}, which needs I/O: call it before serving the table.
 */
export class MountFileSystem extends FileSystem {
  readonly capabilities: FsCapabilities
  /** The mount table, sorted by point. */
  readonly mounts: readonly MountEntry[]
  /** The cwd in mount space. */
  readonly cwd: string
  readonly #mounts: readonly Mount[]
  readonly #minted = new WeakMap<FsTarget, Located>()
  /** Each mount's root as its filesystem resolved it, cached on first use (for `contains` across mounts). */
  readonly #roots = new Map<Mount, FsTarget>()

  constructor(mounts: Readonly<Record<string, FileSystem | MountSpec>>, options: Readonly<MountOptions> = {}) {
    const { cwd, ...limits } = options ?? {}
    super(limits)
    const rows = parseMounts(mounts)
    const classes = rows.map((row) => row.fs.constructor)
    this.#mounts = rows.map((row, index) => ({
      ...row,
      index,
      hooks: FileSystem.hooksOf(row.fs),
      ownUrls: classes.filter((c) => c === row.fs.constructor).length === 1,
    }))
    this.mounts = Object.freeze(rows.map((row) => Object.freeze(row)))
    this.cwd = mountCwd(cwd)
    this.capabilities = weakestCapabilities(rows.map((row) => row.fs.capabilities))
  }

  /**
   * The read-only mounts whose files a writable mount reaches too, so that they could be edited through it
   * (a `/` mount of a directory and a read-only `/docs` mount of its `docs`). Each read-only mount is compared
   * with each writable one by their roots, where roots can be compared:
   * - two stores on this machine's disk (`capabilities.processPath`): by their roots' process paths, `certain`;
   * - two stores whose root URLs (`fileUrl`) have one scheme and host (one server, one bucket): by the URLs'
   *   paths, `possible` (one store under two names can be neither confirmed nor ruled out);
   * - two other stores that `opts.mayShare` says may be one: by their roots' paths, `possible`;
   * - none else (a URL that names no host, as memory's, is a store of its own; a root that does not resolve
   *   cannot be compared).
   * When roots overlap is `readOnlyReach`'s rule: the read-only root at or below the writable one, or the
   * writable root below the read-only one and mounted elsewhere than where the read-only mount shows it.
   */
  async overlaps(opts: OverlapOptions = {}): Promise<MountOverlap[]> {
    const places = new Map<Mount, Place | undefined>()
    for (const mount of this.#mounts) places.set(mount, await this.#placeOf(mount, opts.signal))
    const found: MountOverlap[] = []
    const at = (place: Place, mount: Mount): { point: string; root: string } => ({ point: mount.point, root: place.disk ? place.root : place.path })
    for (const ro of this.#mounts.filter((m) => m.readOnly)) {
      for (const rw of this.#mounts.filter((m) => !m.readOnly)) {
        const [r, w] = [places.get(ro), places.get(rw)]
        if (r === undefined || w === undefined) continue
        const oneServer = !r.disk && !w.disk && r.host !== '' && r.origin === w.origin
        const certainty = r.disk && w.disk ? 'certain' : oneServer || opts.mayShare?.(ro, rw) === true ? 'possible' : undefined
        if (certainty === undefined) continue
        // Disk roots are this platform's paths; the others are compared as URL paths.
        const reach = readOnlyReach(at(r, ro), at(w, rw), segmentsBelow(certainty === 'certain' ? NATIVE : posix))
        if (reach !== undefined) found.push({ readOnly: ro.point, writable: rw.point, certainty, reach, readOnlyRoot: r.root, writableRoot: w.root })
      }
    }
    return found
  }

  /** Where `mount`'s root is (see {@link MountFileSystem.overlaps}); undefined when it does not resolve. */
  async #placeOf(mount: Mount, signal: AbortSignal | undefined): Promise<Place | undefined> {
    let root = this.#roots.get(mount)
    try {
      root ??= await this.#call(mount, { verb: 'resolve', at: mount.point }, () => mount.hooks.resolvePath('.', undefined, signal))
    } catch (err) {
      if (signal?.aborted === true) throw err
      return undefined
    }
    this.#roots.set(mount, root)
    if (mount.fs.capabilities.processPath) return { disk: true, root: mount.fs.processPath(root) }
    const url = mount.fs.fileUrl(root)
    let parsed: URL
    let segments: string[]
    try {
      parsed = new URL(url)
      segments = parsed.pathname.split('/').map((segment) => decodeURIComponent(segment))
    } catch {
      return undefined
    }
    const where = posix.normalize(`/${segments.join('/')}`).replace(/(.)\/+$/, '$1')
    return { disk: false, root: url, origin: `${parsed.protocol}//${parsed.host}`, host: parsed.host, path: where }
  }

  /** The capabilities of the store holding `target` (a read-only mount still reports its store's own). */
  capabilitiesAt(target: FsTarget): FsCapabilities {
    return this.#locate(target).mount.fs.capabilities
  }

  override fileUrl(target: FsTarget): string {
    const { mount, inner } = this.#locate(target)
    return mount.ownUrls ? mount.fs.fileUrl(inner) : mountUrl(this.#pathOf(target))
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    const [p, c] = [this.#locate(parent), this.#locate(child)]
    if (p.mount === c.mount) return p.mount.fs.contains(p.inner, c.inner)
    // Across mounts, lexically, and only for a child inside its own mount's root: a link in a mounted
    // store that leads out of that store's root is outside every directory of the mount space.
    const root = this.#roots.get(c.mount)
    return lexicallyWithin(this.#pathOf(parent), c.mount.point) && root !== undefined && c.mount.fs.contains(root, c.inner)
  }

  override async close(): Promise<void> {
    const errors: unknown[] = []
    for (const fs of new Set(this.#mounts.map((m) => m.fs))) await fs.close().catch((err: unknown) => errors.push(err))
    if (errors.length > 0) throw errors[0]
  }

  /** A rename in a read-only mount is refused before core decides anything else about it. */
  protected override prepareRename(from: FsTarget, to: FsTarget): readonly [FsTarget, FsTarget] {
    for (const end of [from, to]) this.#writableMount(end, 'rename')
    return [from, to]
  }

  /** The no-op rename of a file onto itself is still a mutation: refused in a read-only mount. */
  protected override async renameInPlace(target: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    this.#writableMount(target, 'rename')
    const { mount, inner } = await this.#route(target, request.signal)
    return this.#call(mount, { verb: 'rename', at: target, inner }, () => mount.hooks.renameInPlace(inner, request))
  }

  protected override processPathOf(target: FsTarget): string {
    const { mount, inner } = this.#locate(target)
    return mount.fs.processPath(inner)
  }

  protected override async resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    const base = cwd === undefined ? this.cwd : posix.resolve(this.cwd, cwd)
    return this.#resolveAbsolute(posix.resolve(base, path), signal)
  }

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    const { mount, inner } = await this.#route(target, signal)
    return this.#call(mount, { verb: 'stat', at: target, inner }, () => mount.hooks.statTarget(inner, signal))
  }

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    const abs = posix.resolve(cwd === undefined ? this.cwd : posix.resolve(this.cwd, cwd), path)
    const mount = this.#mountAt(abs)
    return this.#call(mount, { verb: 'lstat', at: abs }, () => mount.hooks.lstatPath(innerPath(mount, abs), undefined, signal))
  }

  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    const { mount, inner } = await this.#route(target, request.signal)
    return this.#call(mount, { verb: 'read', at: target, inner }, () => mount.hooks.loadBytes(inner, request))
  }

  protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    const { mount, inner } = await this.#route(target, signal)
    const chunks = await this.#call(mount, { verb: 'read', at: target, inner }, () => mount.hooks.openBytes(inner, signal))
    return translatedChunks(chunks, (err) => translateError(err, 'read', target.displayPath, (e) => mount.hooks.errorRow(e)))
  }

  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const { mount, inner } = await this.#route(target, signal)
    const { info, chunks } = await this.#call(mount, { verb: 'read', at: target, inner }, () => mount.hooks.openTarget(inner, signal))
    return { info, chunks: translatedChunks(chunks, (err) => translateError(err, 'read', target.displayPath, (e) => mount.hooks.errorRow(e))) }
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const { mount, inner } = await this.#route(target, signal)
    const dir = this.#pathOf(target)
    const below = this.#mounts.filter((m) => m.point !== '/' && posix.dirname(m.point) === dir)
    const shadowed = new Set(below.map((m) => posix.basename(m.point)))
    const entries = await this.#call(mount, { verb: 'list', at: target, inner }, () => mount.hooks.listEntries(inner, signal))
    const merged = entries
      .filter((entry) => !shadowed.has(entry.name))
      .map((entry) => ({ ...entry, target: this.#mint(mount, entry.target, childOf(dir, entry.name)) }))
    for (const m of below) {
      merged.push({ name: posix.basename(m.point), type: 'directory', target: await this.#resolveAbsolute(m.point, signal) })
    }
    return merged
  }

  /**
   * A tree listing across mount points: the store holding `target` lists its subtree (at once where
   * it can), an entry a mount point shadows is left out with what lies below it, and each mount point
   * a listing would show (its parent directory listed) comes as a directory, its own store's tree below it.
   */
  protected override async listSubtree(target: FsTarget, request: TreeRequest): Promise<TreePages> {
    const { mount, inner } = await this.#route(target, request.signal)
    const pages = await this.#call(mount, { verb: 'list', at: target, inner }, () => mount.hooks.listSubtree(inner, request))
    return this.#mountedTree({ mount, inner }, this.#pathOf(target), pages, request)
  }

  async *#mountedTree({ mount, inner }: Located, dir: string, pages: TreePages, request: TreeRequest): AsyncGenerator<FsTreeEntry[]> {
    // The directories listed so far (mount space): a mount point shows where its parent is one of them.
    const listed = new Set<string>([dir])
    try {
      for await (const page of pages) {
        const shown: FsTreeEntry[] = []
        for (const entry of page) {
          const abs = childOf(dir, entry.path)
          if (this.#mountAt(abs) !== mount) continue
          if (entry.type === 'directory' && entry.link !== true) listed.add(abs)
          shown.push({ ...entry, target: this.#mint(mount, entry.target, abs) })
        }
        if (shown.length > 0) yield shown
      }
    } catch (err) {
      const error = translateError(err, 'list', dir, (e) => mount.hooks.errorRow(e))
      const at = error.path ?? ''
      const base = inner.displayPath.replace(/\/+$/, '')
      const outer = at === inner.displayPath ? dir : at.startsWith(`${base}/`) ? childOf(dir, at.slice(base.length + 1)) : at
      throw inMountSpace(error, [[at, outer]])
    }
    // Mount points whose parent lies in this store: nested ones come with the tree of the mount holding them.
    const points = this.#mounts.filter(
      (m) => m !== mount && m.point !== dir && lexicallyWithin(dir, m.point) && this.#mountAt(posix.dirname(m.point)) === mount,
    )
    for (const point of points) {
      if (!listed.has(posix.dirname(point.point))) continue
      const rest = restOf(dir, point.point)
      const top = await this.#resolveAbsolute(point.point, request.signal)
      yield [{ name: posix.basename(point.point), path: rest, type: 'directory', target: top }]
      for await (const page of await this.listSubtree(top, request)) yield page.map((entry) => ({ ...entry, path: `${rest}/${entry.path}` }))
    }
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    this.#writableMount(target, 'write')
    const { mount, inner } = await this.#route(target, request.signal)
    return this.#call(mount, { verb: 'write', at: target, inner }, () => mount.hooks.publishBytes(inner, bytes, request))
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    this.#writableMount(target, 'edit')
    const { mount, inner } = await this.#route(target, request.signal)
    return this.#call(mount, { verb: 'edit', at: target, inner }, () => mount.hooks.updateBytes(inner, request, transform))
  }

  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    this.#writableMount(target, 'remove')
    this.#noMountPointAtOrBelow(target, 'remove')
    const { mount, inner } = await this.#route(target, request.signal)
    return this.#call(mount, { verb: 'remove', at: target, inner }, () => mount.hooks.removeTarget(inner, request))
  }

  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    for (const end of [from, to]) {
      this.#writableMount(end, 'rename')
      this.#noMountPointAtOrBelow(end, 'rename')
    }
    if (this.#mountOf(from) !== this.#mountOf(to)) throw FsError.unsupported('rename', from.displayPath, `cannot rename across mounts (to "${to.displayPath}")`)
    const [source, destination] = [await this.#route(from, request.signal), await this.#route(to, request.signal)]
    const { mount } = source
    if (this.capabilities.renameDirectories !== true && mount.fs.capabilities.renameDirectories === true) {
      // The table declares the weakest: where one mount cannot move directories, none does through it.
      const info = await this.#call(mount, { verb: 'rename', at: from, inner: source.inner }, () => mount.hooks.statTarget(source.inner, request.signal))
      if (info?.type === 'directory') throw FsError.unsupported('rename', from.displayPath, 'this mount table does not move directories (a mount cannot)')
    }
    const rename = (): Awaitable<FsRenameOutcome> => mount.hooks.renameTarget(source.inner, destination.inner, request)
    return this.#call(mount, { verb: 'rename', at: from, inner: source.inner, also: [destination.inner.displayPath, to.displayPath] }, rename)
  }

  protected override async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    this.#writableMount(target, 'create directory')
    const { mount, inner } = await this.#route(target, signal)
    return this.#call(mount, { verb: 'create directory', at: target, inner }, () => mount.hooks.makeDirectory(inner, signal))
  }

  async #resolveAbsolute(abs: string, signal: AbortSignal | undefined): Promise<FsTarget> {
    const mount = this.#mountAt(abs)
    if (!this.#roots.has(mount)) {
      const root = await this.#call(mount, { verb: 'resolve', at: mount.point }, () => mount.hooks.resolvePath('.', undefined, signal))
      this.#roots.set(mount, root)
    }
    const inner = await this.#call(mount, { verb: 'resolve', at: abs }, () => mount.hooks.resolvePath(innerPath(mount, abs), undefined, signal))
    return this.#mint(mount, inner, abs)
  }

  #mint(mount: Mount, inner: FsTarget, displayPath: string): FsTarget {
    const target: FsTarget = { targetKey: FsTargetKey(`${mount.index}:${inner.targetKey}`), displayPath }
    this.#minted.set(target, { mount, inner })
    return target
  }

  /** The mount and inner target of `target` for the hooks: a target minted here, or its `displayPath` resolved afresh. */
  async #route(target: FsTarget, signal: AbortSignal | undefined): Promise<Located> {
    const known = this.#minted.get(target)
    if (known !== undefined) return known
    const fresh = await this.#resolveAbsolute(this.#pathOf(target), signal)
    return this.#minted.get(fresh) as Located
  }

  /**
   * The mount and inner target of `target` without I/O (for `contains`, `fileUrl`, `capabilitiesAt`): a target
   * minted here, else the mount its `displayPath` routes to and the inner key its `targetKey` carries.
   */
  #locate(target: FsTarget): Located {
    const known = this.#minted.get(target)
    if (known !== undefined) return known
    const mount = this.#mountOf(target)
    const prefix = `${mount.index}:`
    const key = target.targetKey.startsWith(prefix) ? target.targetKey.slice(prefix.length) : target.targetKey
    return { mount, inner: { targetKey: FsTargetKey(key), displayPath: innerPath(mount, this.#pathOf(target)) } }
  }

  /** The normalized mount-space path of a target (a minted one's `displayPath` already is). */
  #pathOf(target: FsTarget): string {
    return this.#minted.has(target) ? target.displayPath : posix.resolve(this.cwd, target.displayPath)
  }

  #mountOf(target: FsTarget): Mount {
    return this.#minted.get(target)?.mount ?? this.#mountAt(this.#pathOf(target))
  }

  #mountAt(abs: string): Mount {
    return this.#mounts[routeIndex(this.#mounts, abs)] as Mount
  }

  /** `FS_PERMISSION_DENIED` below a read-only mount, before any I/O. */
  #writableMount(target: FsTarget, verb: FsVerb): void {
    if (this.#mountOf(target).readOnly) throw FsError.at('FS_PERMISSION_DENIED', verb, target.displayPath, 'read-only mount')
  }

  /** `FS_PERMISSION_DENIED` for a mount point, or a directory holding one. */
  #noMountPointAtOrBelow(target: FsTarget, verb: FsVerb): void {
    const path = this.#pathOf(target)
    const point = this.#mounts.find((m) => lexicallyWithin(path, m.point))?.point
    if (point === undefined) return
    const reason = point === path ? 'a mount point cannot be removed or renamed' : `it holds the mount point "${point}"`
    throw FsError.at('FS_PERMISSION_DENIED', verb, target.displayPath, reason)
  }

  /**
   * Runs a hook of `mount`, translating its foreign errors by that filesystem's own table; a message that names
   * the inner target's path (or `also[0]`) names the mount-space path instead.
   */
  async #call<T>(mount: Mount, { verb, at, inner, also }: CallSite, hook: () => Awaitable<T>): Promise<T> {
    try {
      return await hook()
    } catch (err) {
      const shown = typeof at === 'string' ? at : at.displayPath
      const error = translateError(err, verb, shown, (e) => mount.hooks.errorRow(e))
      const renames: Array<readonly [string, string]> = inner === undefined ? [] : [[inner.displayPath, shown]]
      return Promise.reject(inMountSpace(error, also === undefined ? renames : [...renames, also]))
    }
  }
}

/** Where a mounted filesystem's hook is called: its failures are translated under `verb`, naming `at`. */
interface CallSite {
  readonly verb: FsVerb
  /** What the failure names: the mount-space target or path. */
  readonly at: FsTarget | string
  /** The mounted filesystem's own target, whose path in a message becomes `at`'s. */
  readonly inner?: FsTarget | undefined
  /** One more path to rename in a message (a rename's destination): `[inner, outer]`. */
  readonly also?: readonly [string, string] | undefined
}

/** `error`, its message naming mount-space paths where it named a mounted filesystem's own (the cause keeps the original). */
function inMountSpace(error: FsError, renames: ReadonlyArray<readonly [string, string]>): FsError {
  let message = error.message
  let path = error.path
  for (const [inner, outer] of renames) {
    if (inner === outer) continue
    message = message.replace(`"${inner}"`, `"${outer}"`)
    if (path === inner) path = outer
  }
  if (message === error.message && path === error.path) return error
  return new FsError(error.code, message, { ...FsError.optionsOf(error), cause: error, path })
}

/** The path handed to the mounted filesystem: relative to its cwd (its root), `.` for the mount point. */
function innerPath(mount: Mount, abs: string): string {
  const rest = restOf(mount.point, abs)
  return rest === '' ? '.' : rest
}

/** The chunks of `source`, their failures translated (also from `return()`, which releases the file). */
function translatedChunks(source: ByteChunks, translate: (err: unknown) => FsError): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => {
      const chunks = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
      const guarded = async <R>(step: () => R | Promise<R>): Promise<R> => {
        try {
          return await step()
        } catch (err) {
          throw translate(err)
        }
      }
      return {
        next: () => guarded(() => chunks.next()),
        return: (value?: unknown) => guarded(async () => (await chunks.return?.()) ?? { done: true as const, value }),
      }
    },
  }
}
