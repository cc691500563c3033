/**
 * A copy-on-write workspace over any store: the agent works on the overlay, a person reviews its
 * changeset and commits it to the store with the versions it was based on as guards, or throws it away.
 */
import { posix } from 'node:path'
import {
  checkGuard,
  decodeTextOrNull,
  KeyedMutex,
  normalizeLf,
  translateError,
  FileSystemLayer,
  FsError,
  FsTargetKey,
  FsVersion,
  isFsError,
  type Awaitable,
  type ByteChunks,
  type FileSystem,
  type MutexWait,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsPathInfo,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { changeDiff } from './diff.js'

/** What the store held at a path when the overlay first changed it. */
export interface OverlayBase {
  readonly type: 'file' | 'directory' | 'other' | 'absent'
  /** The store's version of what was there (`stat().version`); absent for `absent`. */
  readonly version?: FsVersion | undefined
}

/** One path the overlay changed, as {@link OverlayFileSystem.changes} reports it. */
export interface OverlayChange {
  readonly path: string
  /**
   * `create`, `update` and `remove` of a file; `create directory`; `remove` of a directory (with
   * all below it); `replace`, where a file took a directory's place or a directory a file's.
   */
  readonly kind: 'create' | 'update' | 'remove' | 'create directory' | 'replace'
  /** What the path is in the overlay now (`absent` after a remove). */
  readonly type: 'file' | 'directory' | 'absent'
  /** What the store held when the overlay first changed the path: the commit's guard. */
  readonly base: OverlayBase
  /** The new content's size, for a file. */
  readonly size?: number | undefined
  /**
   * The unified diff of a text file's change (bounded as the edit tool's: `@@` hunks with 3 lines
   * of context, cut with a footer), against the store's content now; absent for a binary file, a
   * directory, or a file above `diffBasisMaxBytes`.
   */
  readonly diff?: string | undefined
  readonly added?: number | undefined
  readonly removed?: number | undefined
  /** The new content of a binary file (one that is not UTF-8 text, or has a NUL in its first 8 KiB). */
  readonly bytes?: Uint8Array | undefined
}

/** Options of {@link OverlayFileSystem.commit} and {@link OverlayFileSystem.discard}. */
export interface OverlaySelection {
  /**
   * Only these paths (as the overlay resolves them) and everything the overlay changed below
   * them; default every change. The directories a selected change needs go with it.
   */
  readonly paths?: readonly string[] | undefined
  readonly signal?: AbortSignal | undefined
}

/** A step of a commit, as its report lists it. */
export interface OverlayStep {
  readonly path: string
  readonly kind: OverlayChange['kind']
}

/** What {@link OverlayFileSystem.commit} did. */
export interface OverlayCommitReport {
  /**
   * `committed`: every selected change is in the store and gone from the overlay. `conflict`: a
   * path changed in the store since the overlay was based on it; nothing was applied. `failed`:
   * the store failed part way; what was applied was undone where the guards allowed, and
   * `standing` lists what is in the store all the same (the overlay keeps every change).
   */
  readonly outcome: 'committed' | 'conflict' | 'failed'
  /** The changes applied by this commit and in the store. */
  readonly standing: readonly OverlayStep[]
  /**
   * The changes the store already held when the commit began (checked first, by content: a commit
   * cut short by a crash, run again, finishes what it had not done; the same change made by another).
   */
  readonly already: readonly OverlayStep[]
  /** The paths changed underneath (`conflict`), each with what the store holds now. */
  readonly conflicts: readonly { readonly path: string; readonly base: OverlayBase; readonly now: OverlayBase }[]
  /** The step that failed and its error (`failed`). */
  readonly failure?: { readonly step: OverlayStep; readonly error: FsError } | undefined
  /** Steps applied, then undone (`failed`). */
  readonly undone: readonly OverlayStep[]
}

/** Where an overlay keeps its changes; see {@link OverlayOptions.upper}. */
export interface OverlayUpper {
  readonly fs: FileSystem
  /** A directory of `fs` the overlay owns: its state (`overlay.json`) and the files' contents (`blobs/`). */
  readonly dir: string
}

/** Options of {@link OverlayFileSystem.open}. */
export interface OverlayOptions {
  /**
   * Where the changes live. Default: this process's memory (gone with it). A store and a directory
   * of it: the changes survive a restart, and `OverlayFileSystem.open` over the same directory
   * takes them up again. One overlay at a time may use a directory.
   */
  readonly upper?: OverlayUpper | undefined
}

interface Entry {
  /** The place in the lower store's namespace (its key is the lower store's). */
  target: FsTarget
  /** The key of the directory that holds it (`undefined` for the root), and its name there. */
  readonly parentKey: FsTargetKey | undefined
  readonly name: string
  kind: 'file' | 'directory' | 'whiteout'
  /** A directory that hides everything the lower store has below it. */
  opaque: boolean
  /** What the store held here at the first change (a commit's undo that restores it names the restored version). */
  base: OverlayBase
  /**
   * For a directory of the store the overlay removed (or replaced): every entry the store had below
   * it then (path, type, version), which a commit checks before it removes what is there, since a
   * directory's own version does not change with what it holds on every store.
   */
  tree?: readonly string[] | undefined
  version: FsVersion
  blob?: string | undefined
  size?: number | undefined
}

interface SavedState {
  readonly format: 1
  /** The store the changes are over (`fileUrl` of its working directory). */
  readonly lower?: string | undefined
  readonly nonce: string
  readonly counter: number
  readonly entries: readonly {
    readonly key: string
    readonly path: string
    readonly parentKey?: string | undefined
    readonly name: string
    readonly kind: Entry['kind']
    readonly opaque: boolean
    readonly base: OverlayBase
    readonly tree?: readonly string[] | undefined
    readonly version: string
    readonly blob?: string | undefined
    readonly size?: number | undefined
  }[]
}

/** Blobs and state: in this process's memory, or in a directory of a store. */
interface Upper {
  readBlob(id: string): Awaitable<Uint8Array>
  writeBlob(id: string, bytes: Uint8Array): Awaitable<void>
  dropBlob(id: string): Awaitable<void>
  readState(): Awaitable<string | undefined>
  writeState(text: string): Awaitable<void>
}

class MemoryUpper implements Upper {
  readonly #blobs = new Map<string, Uint8Array>()
  readBlob(id: string): Uint8Array {
    const bytes = this.#blobs.get(id)
    if (bytes === undefined) throw FsError.notFound('read', id)
    return bytes
  }
  writeBlob(id: string, bytes: Uint8Array): void {
    this.#blobs.set(id, bytes)
  }
  dropBlob(id: string): void {
    this.#blobs.delete(id)
  }
  readState(): undefined {
    return undefined
  }
  writeState(): void {}
}

/**
 * The state file is the commit point: a blob is written first (under a name of its own), then the
 * state that names it, guarded by the version of the state this process last read or wrote. Another
 * process that changed the state meanwhile makes the write fail, and this process reads the state
 * again: two processes on one overlay never lose each other's changes.
 */
class StoreUpper implements Upper {
  readonly #fs: FileSystem
  readonly #dir: string
  /** The version of the state file as this process last read or wrote it (`undefined`: none yet). */
  #version: FsVersion | undefined
  constructor({ fs, dir }: OverlayUpper) {
    this.#fs = fs
    this.#dir = dir
  }
  #at(name: string): Promise<FsTarget> {
    return this.#fs.resolve(posix.join(this.#dir, name))
  }
  async readBlob(id: string): Promise<Uint8Array> {
    return this.#fs.readBytes(await this.#at(`blobs/${id}`))
  }
  async writeBlob(id: string, bytes: Uint8Array): Promise<void> {
    await this.#fs.writeBytes(await this.#at(`blobs/${id}`), bytes)
  }
  async dropBlob(id: string): Promise<void> {
    await this.#fs.remove(await this.#at(`blobs/${id}`)).catch(() => undefined)
  }
  async readState(): Promise<string | undefined> {
    const opened = await this.#fs.openFile(await this.#at('overlay.json')).catch((err: unknown) => {
      if (isFsError(err, 'FS_NOT_FOUND')) return undefined
      throw err
    })
    this.#version = opened?.info.version
    if (opened === undefined) return undefined
    const chunks: Uint8Array[] = []
    for await (const chunk of opened.chunks) chunks.push(new Uint8Array(chunk))
    return Buffer.concat(chunks).toString('utf8')
  }
  /** Whether another process wrote the state since this one last read or wrote it. */
  async changed(): Promise<boolean> {
    return (await this.#fs.stat(await this.#at('overlay.json')))?.version !== this.#version
  }
  async writeState(text: string): Promise<void> {
    const expected = this.#version === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: this.#version } as const)
    this.#version = (await this.#fs.writeText(await this.#at('overlay.json'), text, { expected, before: false })).version
  }
}

/**
 * A key of the overlay's own: for a path below `anchor` (an entry where the overlay made a directory
 * anew, or removed one) that the store cannot name. NUL never appears in the store's keys.
 */
function mintedKey(anchor: FsTargetKey, rest: string): FsTargetKey {
  return FsTargetKey(`${anchor}\u0000${rest}`)
}

/** Past this many removed (or replaced) directories, a look checks them by the path's text only (see `#shadowOf`). */
const HIDERS_SCANNED = 64

const isMinted = (key: FsTargetKey): boolean => key.includes('\u0000')

/** The parent key of an entry made through a link of the store's: listed by no directory of the overlay's own. */
const UNPLACED = FsTargetKey('\u0000unplaced')

/** Lets go of chunks a store opened and no one will read. */
async function release(chunks: ByteChunks): Promise<void> {
  const it = Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]()
  await it.return?.()
}

/** A `stat` as a base: what was there (`absent` for nothing). */
function baseOf(info: FsInfo | undefined): OverlayBase {
  return info === undefined ? { type: 'absent' } : { type: info.type, version: info.version }
}

/** The saved state in `text` (none: `undefined`); anything else is refused, naming the file. */
function parseState(text: string | undefined, name: string): SavedState | undefined {
  if (text === undefined) return undefined
  let saved: SavedState
  try {
    saved = JSON.parse(text) as SavedState
  } catch (err) {
    throw FsError.io('read', name, `not an overlay's state: ${(err as Error).message}`)
  }
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) throw FsError.io('read', name, "not an overlay's state: not an object")
  if (saved.format !== 1) throw FsError.unsupported('read', name, `overlay state format ${String(saved.format)}`)
  const bad = (why: string): FsError => FsError.io('read', name, `not an overlay's state: ${why}`)
  if (typeof saved.nonce !== 'string' || !Number.isSafeInteger(saved.counter) || !Array.isArray(saved.entries)) throw bad('no nonce, counter or entries')
  if (saved.lower !== undefined && typeof saved.lower !== 'string') throw bad('lower is not a string')
  const kinds = ['file', 'directory', 'whiteout']
  const bases = ['file', 'directory', 'other', 'absent']
  for (const e of saved.entries as unknown[]) {
    const entry = e as Record<string, unknown> | null
    const base = entry?.['base'] as Record<string, unknown> | undefined
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof entry['key'] !== 'string' ||
      typeof entry['path'] !== 'string' ||
      typeof entry['name'] !== 'string' ||
      typeof entry['version'] !== 'string' ||
      typeof entry['opaque'] !== 'boolean' ||
      !kinds.includes(entry['kind'] as string) ||
      (entry['parentKey'] !== undefined && typeof entry['parentKey'] !== 'string') ||
      (entry['kind'] === 'file' && (typeof entry['blob'] !== 'string' || !Number.isSafeInteger(entry['size']))) ||
      (entry['tree'] !== undefined && (!Array.isArray(entry['tree']) || !(entry['tree'] as unknown[]).every((l) => typeof l === 'string'))) ||
      typeof base !== 'object' ||
      base === null ||
      !bases.includes(base['type'] as string) ||
      (base['version'] !== undefined && typeof base['version'] !== 'string')
    ) {
      throw bad(`a malformed entry ${JSON.stringify(e).slice(0, 200)}`)
    }
  }
  return saved
}

/** The size of the chunks a stream of the overlay's own bytes yields. */
const CHUNK_BYTES = 64 * 1024

/** `bytes` as a stream's chunks: each a copy (the caller's to change), made as it is asked for. */
function chunked(bytes: Uint8Array): Iterable<Uint8Array> {
  if (bytes.length <= CHUNK_BYTES) return [new Uint8Array(bytes)]
  return {
    *[Symbol.iterator]() {
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.slice(at, at + CHUNK_BYTES)
    },
  }
}

/**
 * A copy-on-write workspace over a store (the lower store, never written by the overlay itself):
 * reads fall through to the store; writes, edits, removes, moves and new directories land in the
 * overlay (a remove as a whiteout that hides the store's file); listings merge the two. The agent
 * gets the overlay as its `FileSystem` (`createFileTools({ fs: overlay })`); a person reads
 * {@link changes}, then {@link commit}s them to the store, each guarded by the version the overlay
 * based it on, or {@link discard}s them.
 *
 * Rules:
 * - the overlay honours the whole contract (the conformance kit runs on it over every backend);
 *   its guards are `process`-strong (its state lives in this process), its `rename` is atomic and
 *   moves files only (`renameDirectories: false`), and it never offers `processPath`;
 * - a file the overlay did not change is the store's: reads, stats and versions are the store's own,
 *   and change when the store changes; one it changed keeps the overlay's content whatever the store does;
 * - the first change of a path records what the store held there (its type and version): the base
 *   {@link commit} checks before anything is applied;
 * - a move of a file the store holds copies its bytes into the overlay (up to `maxTextBytes`);
 * - a path the store cannot name as the overlay sees it (below a file of the store the overlay
 *   replaced with a directory; through a link of the store inside a directory the overlay removed)
 *   gets a key of the overlay's own, and the commit finds it in the store by its path;
 * - with changes kept in a store's directory, every call first rereads the state if another
 *   process wrote it, and every change writes it guarded: two processes never lose a change (the
 *   one that lost the race fails with a retryable `FS_IO_ERROR`, nothing changed).
 */
export class OverlayFileSystem extends FileSystemLayer {
  readonly #upper: Upper
  /** One mutation at a time: the overlay's guards are checked and its state changed under this lock. */
  readonly #lock = new KeyedMutex()
  readonly #entries = new Map<FsTargetKey, Entry>()
  readonly #children = new Map<FsTargetKey | undefined, Set<Entry>>()
  /**
   * Entries that hide what the store has below them: where the store had a directory, a whiteout,
   * a file or an empty directory made in its place. Few (one per directory removed), so a look
   * checks each by the store's own `contains`, which sees through every alias.
   */
  readonly #hiders = new Set<Entry>()
  /** {@link #hiders} by the path they were made at. */
  readonly #hiderPaths = new Map<string, Entry>()
  /** The overlay's files by the path they were made at: a path through one of them is a path through a file. */
  readonly #files = new Map<string, Entry>()
  /**
   * The entries below which the store's namespace is not the overlay's, by the path they were made
   * at: a directory made where the store has a file or a removed directory, and a removed file or directory.
   * A path below one that the store resolves elsewhere (through a link of the removed directory) or
   * not at all (through the file) gets a key of the overlay's own ({@link mintedKey}).
   */
  readonly #mints = new Map<string, Entry>()
  #nonce: string
  #counter: number
  readonly #capabilities: FsCapabilities

  private constructor(lower: FileSystem, upper: Upper, saved: SavedState | undefined) {
    super(lower)
    this.#upper = upper
    this.#nonce = Math.random().toString(36).slice(2, 10)
    this.#counter = 0
    const caps = lower.capabilities
    this.#capabilities = Object.freeze({
      symlinks: caps.symlinks,
      permissions: false,
      processPath: false,
      createIfAbsent: 'process',
      replaceIfVersion: 'process',
      removeIfVersion: 'process',
      versionSource: 'generation',
      newlineInNames: caps.newlineInNames,
      emptyDirectories: true,
      remove: true,
      rename: 'atomic',
      renameDirectories: false,
      createDirectory: 'native',
      listTree: 'walk',
    } satisfies FsCapabilities)
    this.#load(saved)
  }

  /** The overlay's state from what was saved (nothing: empty). */
  #load(saved: SavedState | undefined): void {
    this.#entries.clear()
    this.#children.clear()
    this.#hiders.clear()
    this.#hiderPaths.clear()
    this.#files.clear()
    this.#mints.clear()
    if (saved === undefined) return
    this.#nonce = saved.nonce
    this.#counter = saved.counter
    for (const e of saved.entries) {
      this.#put({
        target: { targetKey: e.key as FsTargetKey, displayPath: e.path },
        parentKey: e.parentKey as FsTargetKey | undefined,
        name: e.name,
        kind: e.kind,
        opaque: e.opaque,
        base: e.base,
        tree: e.tree,
        version: FsVersion(e.version),
        blob: e.blob,
        size: e.size,
      })
    }
  }

  /** Whether the state is kept in a store's directory, where another process may change it. */
  get #shared(): boolean {
    return this.#upper instanceof StoreUpper
  }

  /** Mutations running: the state is not read again under them. */
  #busy = 0

  /** Reads the state again where another process changed it (changes kept in a store's directory). */
  async #sync(): Promise<void> {
    if (this.#busy > 0 || !(this.#upper instanceof StoreUpper)) return
    if (await this.#upper.changed()) this.#load(parseState(await this.#upper.readState(), this.#stateName))
  }

  /** Runs a mutation of the overlay alone, on its latest state; one aborted while it waits leaves the queue, nothing done. */
  #mutate<T>(wait: MutexWait, fn: () => Promise<T>): Promise<T> {
    return this.#lock.run(
      'overlay',
      async () => {
        if (this.#shared) await this.#sync()
        this.#busy++
        try {
          return await fn()
        } finally {
          this.#busy--
        }
      },
      wait,
    )
  }

  /**
   * An overlay over `lower`. With `options.upper`, the changes kept in its directory by an earlier
   * overlay (over the same store) are taken up again.
   */
  static async open(lower: FileSystem, options: OverlayOptions = {}): Promise<OverlayFileSystem> {
    if (options.upper === undefined) return new OverlayFileSystem(lower, new MemoryUpper(), undefined)
    const upper = new StoreUpper(options.upper)
    const name = posix.join(options.upper.dir, 'overlay.json')
    const saved = parseState(await upper.readState(), name)
    const lowerId = lower.fileUrl(await lower.resolve('.'))
    // Changes made over another store would be committed to this one, guarded by that store's versions.
    if (saved?.lower !== undefined && saved.lower !== lowerId) {
      throw FsError.unsupported('read', name, `these changes were made over ${saved.lower}, not over ${lowerId}`)
    }
    const overlay = new OverlayFileSystem(lower, upper, saved)
    overlay.#stateName = name
    overlay.#lowerId = lowerId
    return overlay
  }

  /** The state file's path, for errors. */
  #stateName = 'overlay.json'
  /** The store under the overlay, as its state names it (`fileUrl` of its working directory). */
  #lowerId = ''

  override get capabilities(): FsCapabilities {
    return this.#capabilities
  }

  /** How many paths the overlay changed. */
  get size(): number {
    return this.#entries.size
  }

  // ---- the state ----

  #put(entry: Entry): void {
    const old = this.#entries.get(entry.target.targetKey)
    if (old !== undefined) this.#drop(old)
    this.#entries.set(entry.target.targetKey, entry)
    let siblings = this.#children.get(entry.parentKey)
    if (siblings === undefined) this.#children.set(entry.parentKey, (siblings = new Set()))
    siblings.add(entry)
    if (entry.base.type === 'directory' && (entry.kind !== 'directory' || entry.opaque)) {
      this.#hiders.add(entry)
      this.#hiderPaths.set(entry.target.displayPath, entry)
    }
    if (entry.kind === 'file') this.#files.set(entry.target.displayPath, entry)
    if (entry.base.type !== 'absent' && (entry.kind === 'directory' ? entry.opaque : entry.kind === 'whiteout')) {
      this.#mints.set(entry.target.displayPath, entry)
    }
  }

  #drop(entry: Entry): void {
    this.#entries.delete(entry.target.targetKey)
    this.#children.get(entry.parentKey)?.delete(entry)
    this.#hiders.delete(entry)
    if (this.#hiderPaths.get(entry.target.displayPath) === entry) this.#hiderPaths.delete(entry.target.displayPath)
    if (this.#files.get(entry.target.displayPath) === entry) this.#files.delete(entry.target.displayPath)
    if (this.#mints.get(entry.target.displayPath) === entry) this.#mints.delete(entry.target.displayPath)
  }

  #version(): FsVersion {
    return FsVersion(`overlay:${this.#nonce}:${++this.#counter}`)
  }

  async #save(dropped: readonly string[] = []): Promise<void> {
    if (!(await this.#trySave(dropped))) {
      throw FsError.io('write', this.#stateName, 'another process changed the overlay at the same time; try again', { retryable: true })
    }
  }

  /**
   * Writes the state (guarded by the version this process last read or wrote) and drops `dropped`'s
   * blobs; `false` when another process wrote it meanwhile, and then the state is read again.
   */
  async #trySave(dropped: readonly string[] = []): Promise<boolean> {
    if (this.#upper instanceof MemoryUpper) {
      for (const blob of dropped) this.#upper.dropBlob(blob)
      return true
    }
    const state: SavedState = {
      format: 1,
      lower: this.#lowerId,
      nonce: this.#nonce,
      counter: this.#counter,
      entries: [...this.#entries.values()].map((e) => ({
        key: e.target.targetKey,
        path: e.target.displayPath,
        ...(e.parentKey === undefined ? {} : { parentKey: e.parentKey }),
        name: e.name,
        kind: e.kind,
        opaque: e.opaque,
        base: e.base,
        ...(e.tree === undefined ? {} : { tree: e.tree }),
        version: e.version,
        ...(e.blob === undefined ? {} : { blob: e.blob, size: e.size }),
      })),
    }
    try {
      await this.#upper.writeState(JSON.stringify(state))
    } catch (err) {
      // Not saved: what this process holds is not the overlay's state. Read it again.
      this.#load(parseState(await this.#upper.readState(), this.#stateName))
      if (isFsError(err, 'FS_STALE_VERSION') || isFsError(err, 'FS_NOT_OBSERVED')) return false
      throw err
    }
    for (const blob of dropped) await this.#upper.dropBlob(blob)
    return true
  }

  /** The entry of {@link #mints} nearest above `path` (by its text), and the names below it. */
  #mintAbove(path: string): { entry: Entry; rest: string } | undefined {
    for (let at = posix.dirname(path), up = path; at !== up; up = at, at = posix.dirname(at)) {
      const entry = this.#mints.get(at)
      if (entry !== undefined) return { entry, rest: path.slice(at === '/' ? 1 : at.length + 1) }
    }
    return undefined
  }

  /**
   * A key of the overlay's own for `path`, below `mint`: anchored at the nearest directory above the
   * path that the store resolves inside `mint`, so that the key stays the same whatever the overlay
   * makes on the way later.
   */
  async #mintedTarget(path: string, mint: Entry, signal: AbortSignal | undefined): Promise<FsTarget> {
    for (let at = posix.dirname(path), up = path; at !== up; up = at, at = posix.dirname(at)) {
      let found: FsTarget | undefined
      try {
        found = await super.resolvePath(at, undefined, signal)
      } catch {
        found = undefined
      }
      if (found !== undefined && (found.targetKey === mint.target.targetKey || this.inner.contains(mint.target, found))) {
        return { targetKey: mintedKey(found.targetKey, path.slice(at === '/' ? 1 : at.length + 1)), displayPath: path }
      }
    }
    return { targetKey: mintedKey(mint.target.targetKey, path.slice(mint.target.displayPath.length + 1)), displayPath: path }
  }

  /** The store's target of the entry a key of the overlay's own hangs from. */
  #anchorOf(key: FsTargetKey): FsTarget {
    const anchor = FsTargetKey(key.slice(0, key.indexOf('\u0000')))
    return this.#entries.get(anchor)?.target ?? { targetKey: anchor, displayPath: '' }
  }

  /** Containment, keys of the overlay's own included (below their anchor, `/`-joined names). */
  override contains(parent: FsTarget, child: FsTarget): boolean {
    const [p, c] = [parent.targetKey, child.targetKey]
    if (!isMinted(c) && !isMinted(p)) return this.inner.contains(parent, child)
    if (p === c) return true
    if (isMinted(p)) return c.startsWith(`${p}/`)
    const anchor = this.#anchorOf(c)
    return anchor.targetKey === p || this.inner.contains(parent, anchor)
  }

  override fileUrl(target: FsTarget): string {
    const key = target.targetKey
    if (!isMinted(key)) return this.inner.fileUrl(target)
    const rest = key.slice(key.indexOf('\u0000') + 1)
    return `${this.inner.fileUrl(this.#anchorOf(key))}/${rest.split('/').map(encodeURIComponent).join('/')}`
  }

  /**
   * The entry that hides what the store has at `target` (one of {@link #hiders} above it), if any:
   * found by the path's text first, then by the store's containment (which sees through links) while
   * the hiders are few (up to {@link HIDERS_SCANNED}); past that, by the path's text only, so that a
   * look does not cost one comparison per removed directory.
   */
  #shadowOf(target: FsTarget): Entry | undefined {
    if (this.#hiders.size === 0) return undefined
    for (let at = posix.dirname(target.displayPath), up = target.displayPath; at !== up; up = at, at = posix.dirname(at)) {
      const hider = this.#hiderPaths.get(at)
      if (hider !== undefined && hider.target.targetKey !== target.targetKey) return hider
    }
    if (this.#hiders.size > HIDERS_SCANNED) return undefined
    for (const hider of this.#hiders) {
      if (hider.target.targetKey !== target.targetKey && this.contains(hider.target, target)) return hider
    }
    return undefined
  }

  /** What the overlay shows at `target`: an entry of its own, the store's (`lower`), or nothing. */
  #view(target: FsTarget): Entry | 'lower' | undefined {
    const entry = this.#entries.get(target.targetKey)
    if (entry !== undefined) return entry.kind === 'whiteout' ? undefined : entry
    // A key of the overlay's own names nothing of the store's.
    if (isMinted(target.targetKey)) return undefined
    return this.#shadowOf(target) === undefined ? 'lower' : undefined
  }

  #entryInfo(entry: Entry): FsInfo {
    return entry.kind === 'file' ? { type: 'file', size: entry.size ?? 0, version: entry.version } : { type: 'directory', version: entry.version }
  }

  async #stat(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    const view = this.#view(target)
    if (view === undefined) return undefined
    if (view !== 'lower') return this.#entryInfo(view)
    return super.statTarget(target, signal)
  }

  async #bytes(target: FsTarget, verb: 'read' | 'edit' | 'rename', request: ReadRequest): Promise<Uint8Array> {
    let retried = false
    for (;;) {
      const view = this.#view(target)
      if (view === undefined) throw FsError.notFound(verb, target.displayPath)
      if (view === 'lower') return super.loadBytes(target, request)
      if (view.kind !== 'file') throw FsError.notRegularFile(verb, target.displayPath)
      if ((view.size ?? 0) > request.maxBytes) throw FsError.tooLarge(verb === 'rename' ? 'read' : verb, target.displayPath, view.size ?? 0, request.maxBytes)
      try {
        return await this.#upper.readBlob(view.blob as string)
      } catch (err) {
        // Replaced while it was being read (here, or by another process whose state is read again): read what replaced it.
        if (this.#entries.get(target.targetKey) === view) {
          if (retried || !(this.#upper instanceof StoreUpper) || this.#busy > 0) throw err
          retried = true
          if (this.#shared) await this.#sync()
        }
      }
    }
  }

  /** The store's state at `target` now, as a base. */
  async #lowerBase(target: FsTarget, signal: AbortSignal | undefined): Promise<OverlayBase> {
    return baseOf(await this.#lowerInfo(target, signal))
  }

  /** The store's `stat` of `target` (a key of the overlay's own names nothing there). */
  async #lowerInfo(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    if (isMinted(target.targetKey)) return undefined
    try {
      return await super.statTarget(target, signal)
    } catch (err) {
      if (translateError(err, 'stat', target.displayPath, (e) => this.errorRow(e)).code === 'FS_NOT_FOUND') return undefined
      throw err
    }
  }

  /** The store's file at `target`, its metadata and its bytes from one look (`openFile`); absent: no info. */
  async #openLower(
    target: FsTarget,
    verb: 'edit',
    maxBytes: number,
    signal: AbortSignal | undefined,
  ): Promise<{ info: FsInfo | undefined; bytes: Uint8Array | undefined }> {
    let opened: OpenedFile
    try {
      opened = await super.openTarget(target, signal)
    } catch (err) {
      // The hook's own error, in the contract's terms.
      const error = translateError(err, 'read', target.displayPath, (e) => this.errorRow(e))
      if (error.code === 'FS_NOT_FOUND') return { info: undefined, bytes: undefined }
      if (error.code === 'FS_NOT_REGULAR_FILE') return { info: await this.#lowerInfo(target, signal), bytes: undefined }
      throw err
    }
    const size = opened.info.size ?? 0
    if (opened.info.type !== 'file' || size > maxBytes) {
      await release(opened.chunks)
      if (opened.info.type === 'file') throw FsError.tooLarge(verb, target.displayPath, size, maxBytes)
      return { info: opened.info, bytes: undefined }
    }
    const chunks: Uint8Array[] = []
    for await (const chunk of opened.chunks) chunks.push(new Uint8Array(chunk))
    return { info: opened.info, bytes: chunks.length === 1 ? chunks[0] : new Uint8Array(Buffer.concat(chunks)) }
  }

  /** The parent of `target` in the store's namespace, and its name there; `undefined` at the root. */
  async #place(target: FsTarget, signal: AbortSignal | undefined): Promise<{ parent: FsTarget; name: string } | undefined> {
    const dir = posix.dirname(target.displayPath)
    if (dir === target.displayPath) return undefined
    const parent = await this.#resolve(dir, undefined, signal)
    if (parent.targetKey === target.targetKey) return undefined
    return { parent, name: posix.basename(target.displayPath) }
  }

  /**
   * Where an entry at `target` is listed: its parent and name, unless the path's last name is a
   * link of the store's (`target` is what it leads to, elsewhere): then nowhere of the overlay's
   * own ({@link UNPLACED}), the store's listing of the place it leads to showing it by its key.
   */
  async #entryPlace(target: FsTarget, signal: AbortSignal | undefined): Promise<{ parent: FsTarget; name: string } | undefined> {
    const place = await this.#place(target, signal)
    if (place === undefined || isMinted(target.targetKey)) return place
    const own = await super.lstatPath(target.displayPath, undefined, signal)
    return own?.type === 'symlink' ? { parent: { targetKey: UNPLACED, displayPath: '' }, name: place.name } : place
  }

  /**
   * A new entry at `target` of `kind`. Its base is the earlier entry's; else `seen`, what the store
   * held when the caller's guard was checked or its bytes were read (never a later look, which
   * could take another writer's change for the base); else the store's now.
   */
  async #entryAt(target: FsTarget, kind: Entry['kind'], signal: AbortSignal | undefined, seen?: OverlayBase): Promise<Entry> {
    const old = this.#entries.get(target.targetKey)
    const place = old === undefined ? await this.#entryPlace(target, signal) : undefined
    const base = old?.base ?? seen ?? (await this.#lowerBase(target, signal))
    return {
      target: old?.target ?? target,
      parentKey: old === undefined ? place?.parent.targetKey : old.parentKey,
      name: old === undefined ? (place?.name ?? '') : old.name,
      kind,
      // A directory is made only where the overlay shows nothing: where the store has something, it is hidden (removed, or
      // a file replaced), and the new directory shows none of what the store has below it.
      opaque: kind === 'directory' && base.type !== 'absent',
      base,
      tree: old?.tree,
      version: this.#version(),
    }
  }

  /**
   * What the store has below the directory `target` now, one line per entry (`path key type
   * version`), sorted; where `bases` names a key (what the overlay changed there, and the store held
   * when it did), the base stands in for the store's entry, so that a change the overlay hid is
   * still seen as a change.
   */
  async #lowerTree(target: FsTarget, signal: AbortSignal | undefined, bases: ReadonlyMap<FsTargetKey, OverlayBase> = new Map()): Promise<string[]> {
    const lines: string[] = []
    const seen = new Set<FsTargetKey>()
    const line = (path: string, key: FsTargetKey, base: OverlayBase): string => `${path}\u0000${key}\u0000${base.type}\u0000${base.version ?? ''}`
    for await (const page of await this.inner.listTree(target, { signal })) {
      for (const entry of page) {
        const key = entry.target.targetKey
        seen.add(key)
        const base = bases.get(key) ?? { type: entry.type, version: entry.version }
        if (base.type !== 'absent') lines.push(line(entry.path, key, base))
      }
    }
    for (const [key, base] of bases) if (!seen.has(key) && base.type !== 'absent') lines.push(line('', key, base))
    return lines.sort()
  }

  /**
   * Makes the missing directories above `target` (a file on the way is `FS_NOT_DIRECTORY`), and
   * returns the entries made (to undo them if what needed them fails).
   */
  async #makeParents(target: FsTarget, verb: 'write' | 'rename' | 'create directory', signal: AbortSignal | undefined): Promise<Entry[]> {
    const missing: FsTarget[] = []
    for (let at = await this.#place(target, signal); at !== undefined; at = await this.#place(at.parent, signal)) {
      const info = await this.#stat(at.parent, signal)
      if (info?.type === 'directory') break
      // A parent that became a file since the path was resolved: a path through a file.
      if (info !== undefined) throw FsError.throughFile(verb, target.displayPath)
      missing.push(at.parent)
    }
    const made: Entry[] = []
    for (const dir of missing.reverse()) {
      const entry = await this.#entryAt(dir, 'directory', signal)
      this.#put(entry)
      made.push(entry)
    }
    return made
  }

  /** A file entry with `bytes` at `target`. */
  async #file(
    target: FsTarget,
    bytes: Uint8Array,
    signal: AbortSignal | undefined,
    seen: OverlayBase | undefined,
    version?: FsVersion,
  ): Promise<{ entry: Entry; dropped: string | undefined }> {
    const entry = await this.#entryAt(target, 'file', signal, seen)
    const blob = `${this.#nonce}-${this.#counter}-${Math.random().toString(36).slice(2, 8)}`
    await this.#upper.writeBlob(blob, bytes)
    entry.blob = blob
    entry.size = bytes.length
    if (version !== undefined) entry.version = version
    const dropped = this.#entries.get(target.targetKey)?.blob
    this.#put(entry)
    return { entry, dropped }
  }

  /** `entry` gone from the overlay: a whiteout where the store has something now, else nothing. */
  async #remove(
    entry: Entry | undefined,
    target: FsTarget,
    signal: AbortSignal | undefined,
    seen?: OverlayBase,
    below: ReadonlyMap<FsTargetKey, OverlayBase> = new Map(),
  ): Promise<string[]> {
    const dropped: string[] = []
    if (entry?.blob !== undefined) dropped.push(entry.blob)
    const now = await this.#lowerBase(target, signal)
    const base = entry?.base ?? seen ?? now
    if (now.type === 'absent' && base.type === 'absent') {
      if (entry !== undefined) this.#drop(entry)
      return dropped
    }
    const place = entry === undefined ? await this.#entryPlace(target, signal) : undefined
    this.#put({
      target: entry?.target ?? target,
      parentKey: entry === undefined ? place?.parent.targetKey : entry.parentKey,
      name: entry?.name ?? place?.name ?? posix.basename(target.displayPath),
      kind: 'whiteout',
      opaque: false,
      base,
      tree: entry?.tree ?? (base.type === 'directory' && now.type === 'directory' ? await this.#lowerTree(target, signal, below) : undefined),
      version: this.#version(),
    })
    return dropped
  }

  // ---- the hooks ----

  protected override async resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    if (this.#shared) await this.#sync()
    return this.#resolve(path, cwd, signal)
  }

  /**
   * `path` in the overlay's namespace: the store's target, unless the path lies below an entry of
   * {@link #mints} and the store resolves it elsewhere or not at all; then a key of the overlay's own.
   */
  async #resolve(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget> {
    let target: FsTarget
    try {
      target = await super.resolvePath(path, cwd, signal)
    } catch (err) {
      if (this.#mints.size === 0 || !isFsError(err, 'FS_NOT_FOUND')) throw err
      const lexical = posix.resolve((await super.resolvePath(cwd ?? '.', undefined, signal)).displayPath, path)
      const above = this.#mintAbove(lexical)
      if (above === undefined) throw err
      return this.#mintedTarget(lexical, above.entry, signal)
    }
    if (this.#mints.size > 0) {
      // Below a directory the overlay made anew (or removed), a path the store resolves out of it (through a link
      // of the store's, which the overlay hid) names something new.
      const above = this.#mintAbove(target.displayPath)
      if (above !== undefined && !this.contains(above.entry.target, target)) return this.#mintedTarget(target.displayPath, above.entry, signal)
    }
    // A path through a file the overlay made is a path through a file. (Reached through an alias of
    // its directory, it is not caught here: such a path is absent, and a write there is refused.)
    if (this.#files.size > 0) {
      for (let at = posix.dirname(target.displayPath), up = ''; at !== up; up = at, at = posix.dirname(at)) {
        if (this.#files.has(at)) throw FsError.throughFile('resolve', target.displayPath)
      }
    }
    return target
  }

  protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    if (this.#shared) await this.#sync()
    return this.#stat(target, signal)
  }

  protected override async lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsPathInfo | undefined> {
    if (this.#shared) await this.#sync()
    const own = await super.lstatPath(path, cwd, signal)
    if (this.#entries.size === 0) return own
    if (own?.type === 'symlink') {
      // A link of the store stays a link (a write through it wrote what it names) while the directory holding it is shown.
      const view = this.#view(await this.#resolve(posix.dirname(path), cwd, signal))
      if (view === 'lower' || (view?.kind === 'directory' && !view.opaque)) return own
    }
    return this.#stat(await this.#resolve(path, cwd, signal), signal)
  }

  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    if (this.#shared) await this.#sync()
    if (this.#view(target) === 'lower') return super.loadBytes(target, request)
    const bytes = await this.#bytes(target, 'read', request)
    // The overlay's own bytes are its content: a caller that keeps them gets a copy.
    return request.transient === true ? bytes : new Uint8Array(bytes)
  }

  protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    if (this.#shared) await this.#sync()
    const view = this.#view(target)
    if (view === 'lower') return super.openBytes(target, signal)
    return chunked(await this.#bytes(target, 'read', { signal, maxBytes: Number.MAX_SAFE_INTEGER }))
  }

  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    if (this.#shared) await this.#sync()
    const view = this.#view(target)
    if (view === 'lower') return super.openTarget(target, signal)
    if (view === undefined) throw FsError.notFound('read', target.displayPath)
    if (view.kind !== 'file') throw FsError.notRegularFile('read', target.displayPath)
    return { info: this.#entryInfo(view), chunks: chunked(await this.#bytes(target, 'read', { signal, maxBytes: Number.MAX_SAFE_INTEGER })) }
  }

  protected override async listEntries(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    if (this.#shared) await this.#sync()
    const view = this.#view(target)
    if (view === undefined) throw FsError.notFound('list', target.displayPath)
    if (view !== 'lower' && view.kind !== 'directory') throw FsError.notDirectory('list', target.displayPath)
    const entries = new Map<string, FsDirEntry>()
    if (view === 'lower' || (!view.opaque && !isMinted(target.targetKey))) {
      let listed: FsDirEntry[] = []
      try {
        listed = await super.listEntries(target, signal)
      } catch (err) {
        // A directory the overlay made where the store has none.
        if (view === 'lower' || !isFsError(err, 'FS_NOT_FOUND')) throw err
      }
      for (const entry of listed) {
        const own = this.#entries.get(entry.target.targetKey)
        if (own === undefined) {
          entries.set(entry.name, entry)
          continue
        }
        if (own.kind === 'whiteout') {
          // The removed file itself is gone; a link of the store to it stays, leading nowhere.
          if ((await super.lstatPath(entry.target.displayPath, undefined, signal))?.type === 'symlink') {
            entries.set(entry.name, { name: entry.name, type: 'other', target: entry.target })
          }
          continue
        }
        // A link of the store to a file the overlay changed: listed with what it names now.
        entries.set(entry.name, { name: entry.name, target: entry.target, ...this.#entryInfo(own) })
      }
    }
    for (const own of this.#children.get(target.targetKey) ?? []) {
      if (own.kind === 'whiteout') {
        entries.delete(own.name)
        continue
      }
      entries.set(own.name, {
        name: own.name,
        target: { targetKey: own.target.targetKey, displayPath: posix.join(target.displayPath, own.name) },
        ...this.#entryInfo(own),
      })
    }
    return [...entries.values()]
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return this.#mutate({ verb: 'write', path: target.displayPath, signal: request.signal }, async () => {
      const path = target.displayPath
      const view = this.#view(target)
      const info = await this.#stat(target, request.signal)
      if (info !== undefined && info.type !== 'file') throw FsError.notRegularFile('write', path)
      checkGuard('write', path, request.expected, info?.version)
      // The base is the look the guard was checked against.
      const seen = view === 'lower' ? baseOf(info) : undefined
      const before =
        info !== undefined && request.beforeMaxBytes > 0 && (info.size ?? Infinity) <= request.beforeMaxBytes
          ? await this.#bytes(target, 'read', { signal: request.signal, maxBytes: request.beforeMaxBytes })
          : null
      const made = await this.#makeParents(target, 'write', request.signal)
      try {
        const { entry, dropped } = await this.#file(target, new Uint8Array(bytes), request.signal, seen)
        await this.#save(dropped === undefined ? [] : [dropped])
        return { created: info === undefined, version: entry.version, before }
      } catch (err) {
        for (const entry of made.reverse()) this.#drop(entry)
        throw err
      }
    })
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return this.#mutate({ verb: 'edit', path: target.displayPath, signal: request.signal }, async () => {
      const path = target.displayPath
      const { signal, maxBytes } = request
      // The store's file is read in one look (its version and its bytes), the base of the change.
      const { info, bytes } =
        this.#view(target) === 'lower' ? await this.#openLower(target, 'edit', maxBytes, signal) : { info: await this.#stat(target, signal), bytes: undefined }
      if (info !== undefined && info.type !== 'file') throw FsError.notRegularFile('edit', path)
      checkGuard('edit', path, request.expected, info?.version)
      if ((info?.size ?? 0) > maxBytes) throw FsError.tooLarge('edit', path, info?.size ?? 0, maxBytes)
      const next = transform(bytes ?? (await this.#bytes(target, 'edit', { signal, maxBytes })))
      const { entry, dropped } = await this.#file(target, new Uint8Array(next), signal, bytes === undefined ? undefined : baseOf(info))
      await this.#save(dropped === undefined ? [] : [dropped])
      return entry.version
    })
  }

  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return this.#mutate({ verb: 'remove', path: target.displayPath, signal: request.signal }, async () => {
      const path = target.displayPath
      const { expected, recursive, maxEntries, signal } = request
      const info = await this.#stat(target, signal)
      if (info === undefined) throw expected === undefined ? FsError.notFound('remove', path) : FsError.stale('remove', path, 'gone')
      if (info.type === 'other') throw FsError.notRegularFile('remove', path)
      checkGuard('remove', path, expected, info.version)
      let entries = 1
      if (info.type === 'directory') {
        const below = await this.#count(target, maxEntries, signal)
        if (below > 0 && !recursive) throw FsError.notEmpty('remove', path)
        entries += below
        if (entries > maxEntries) throw FsError.tooManyEntries('remove', path, entries, maxEntries)
      }
      const seen = this.#view(target) === 'lower' ? baseOf(info) : undefined
      const dropped: string[] = []
      // What the overlay made below a removed directory goes with it; the whiteout hides the store's. What the
      // store held where the overlay changed it stands in the whiteout's record of the store below, so that a
      // change the overlay hid there is still a conflict at the commit.
      const below = new Map<FsTargetKey, OverlayBase>()
      if (info.type === 'directory') {
        for (const entry of [...this.#entries.values()]) {
          if (entry.target.targetKey !== target.targetKey && this.contains(target, entry.target)) {
            if (entry.blob !== undefined) dropped.push(entry.blob)
            if (!isMinted(entry.target.targetKey)) below.set(entry.target.targetKey, entry.base)
            this.#drop(entry)
          }
        }
      }
      dropped.push(...(await this.#remove(this.#entries.get(target.targetKey), target, signal, seen, below)))
      await this.#save(dropped)
      return { type: info.type, entries }
    })
  }

  /** The entries below a directory in the overlay's view, counted up to `limit` + 1. */
  async #count(dir: FsTarget, limit: number, signal: AbortSignal | undefined): Promise<number> {
    let count = 0
    const pending = [dir]
    while (pending.length > 0 && count <= limit) {
      const at = pending.pop() as FsTarget
      for (const entry of await this.listEntries(at, signal)) {
        count++
        const own = await this.lstatPath(entry.target.displayPath, undefined, signal)
        if (own?.type === 'directory') pending.push(entry.target)
      }
    }
    return count
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return this.#mutate({ verb: 'rename', path: from.displayPath, signal: request.signal }, async () => {
      const path = from.displayPath
      const { expected, overwrite, signal } = request
      const info = await this.#stat(from, signal)
      if (info === undefined) throw expected === undefined ? FsError.notFound('rename', path) : FsError.stale('rename', path, 'gone')
      if (info.type === 'directory') throw FsError.unsupported('rename', path, 'an overlay moves files only')
      if (info.type !== 'file') throw FsError.notRegularFile('rename', path)
      checkGuard('rename', path, expected, info.version)
      const seenFrom = this.#view(from) === 'lower' ? baseOf(info) : undefined
      const toView = this.#view(to)
      const existing = await this.#stat(to, signal)
      const seenTo = toView === 'lower' ? baseOf(existing) : undefined
      if (existing !== undefined) {
        if (overwrite === false) throw FsError.destinationExists('rename', to.displayPath)
        if (existing.type !== 'file') throw FsError.notRegularFile('rename', to.displayPath)
        if (overwrite !== true) checkGuard('rename', to.displayPath, overwrite, existing.version)
      }
      const bytes = await this.#bytes(from, 'rename', { signal, maxBytes: this.maxTextBytes })
      const made = await this.#makeParents(to, 'rename', signal)
      const source = this.#entries.get(from.targetKey)
      let moved: Entry
      let dropped: string | undefined
      try {
        ;({ entry: moved, dropped } = await this.#file(to, bytes, signal, seenTo, info.version))
      } catch (err) {
        for (const entry of made.reverse()) this.#drop(entry)
        throw err
      }
      const gone = await this.#remove(source, from, signal, seenFrom)
      await this.#save([...(dropped === undefined ? [] : [dropped]), ...gone])
      return { type: 'file', replaced: existing !== undefined, version: moved.version }
    })
  }

  protected override async renameInPlace(target: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const info = await this.#stat(target, request.signal)
    if (info === undefined)
      throw request.expected === undefined ? FsError.notFound('rename', target.displayPath) : FsError.stale('rename', target.displayPath, 'gone')
    if (info.type === 'directory') throw FsError.unsupported('rename', target.displayPath, 'an overlay moves files only')
    if (info.type === 'other') throw FsError.notRegularFile('rename', target.displayPath)
    checkGuard('rename', target.displayPath, request.expected, info.version)
    return { type: info.type, replaced: false, version: info.version }
  }

  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#mutate({ verb: 'create directory', path: target.displayPath, signal }, async () => {
      const info = await this.#stat(target, signal)
      if (info?.type === 'directory') return false
      if (info !== undefined) throw FsError.notDirectory('create directory', target.displayPath)
      await this.#makeParents(target, 'create directory', signal)
      this.#put(await this.#entryAt(target, 'directory', signal))
      await this.#save()
      return true
    })
  }

  // ---- the changeset ----

  /**
   * The entries of `selection` (every entry, or those at or below its paths), by path. For a commit
   * (`forCommit`), also what a chosen change needs: the directories the overlay made above it, and
   * everything below a directory it replaces (whose step removes what the store has below it).
   */
  async #selected(selection: OverlaySelection, forCommit = false): Promise<Entry[]> {
    const all = [...this.#entries.values()]
    if (selection.paths === undefined) return this.#ordered(all)
    const roots = await Promise.all(selection.paths.map((p) => this.#resolve(p, undefined, selection.signal)))
    const chosen = new Set(all.filter((e) => roots.some((r) => this.contains(r, e.target))))
    if (!forCommit) return this.#ordered([...chosen])
    for (const e of [...chosen]) {
      for (let up = this.#parentOf(e), hops = 0; up !== undefined && hops < 4096; up = this.#parentOf(up), hops++) if (up.kind === 'directory') chosen.add(up)
    }
    for (const d of [...chosen]) {
      if (d.kind === 'directory' && d.opaque) for (const e of all) if (e !== d && this.contains(d.target, e.target)) chosen.add(e)
    }
    return this.#ordered([...chosen])
  }

  /** The entry of the directory that holds `e`, where the overlay has one. */
  #parentOf(e: Entry): Entry | undefined {
    return e.parentKey === undefined ? undefined : this.#entries.get(e.parentKey)
  }

  /**
   * Each entry after the entries above it (by the directories that hold it, which the overlay
   * made or replaced: a path through a link sorts elsewhere than what it names): the order in which
   * a commit applies them.
   */
  #outermostFirst(chosen: Entry[]): Entry[] {
    const depth = new Map<Entry, number>()
    const depthOf = (e: Entry, hops = 0): number => {
      const known = depth.get(e)
      if (known !== undefined) return known
      const parent = this.#parentOf(e)
      const d = parent === undefined || hops > 4096 ? 0 : depthOf(parent, hops + 1) + 1
      depth.set(e, d)
      return d
    }
    return [...chosen].sort((a, b) => depthOf(a) - depthOf(b))
  }

  /** By path, as a tree lists it: a directory before what is below it. */
  #ordered(chosen: Entry[]): Entry[] {
    return chosen.sort((a, b) => (a.target.displayPath < b.target.displayPath ? -1 : a.target.displayPath > b.target.displayPath ? 1 : 0))
  }

  #kind(e: Entry): OverlayChange['kind'] {
    if (e.kind === 'whiteout') return 'remove'
    if (e.kind === 'directory') return e.base.type === 'absent' ? 'create directory' : 'replace'
    return e.base.type === 'absent' ? 'create' : e.base.type === 'file' ? 'update' : 'replace'
  }

  /**
   * Every path the overlay changed, by path (a directory before what is below it): what it is now, what the store held when the
   * overlay first changed it, and for a text file the diff against the store's content now.
   */
  async changes(selection: OverlaySelection = {}): Promise<OverlayChange[]> {
    if (this.#shared) await this.#sync()
    const out: OverlayChange[] = []
    for (const e of await this.#selected(selection)) {
      // A directory that was already there and only holds changes is no change of its own.
      if (e.kind === 'directory' && e.base.type === 'directory' && !e.opaque) continue
      const change = { path: e.target.displayPath, kind: this.#kind(e), type: e.kind === 'whiteout' ? 'absent' : e.kind, base: e.base } as const
      if (e.kind !== 'file') {
        out.push(change)
        continue
      }
      const after = await this.#upper.readBlob(e.blob as string)
      let before: Uint8Array | undefined
      if (e.base.type === 'file') {
        try {
          before = await super.loadBytes(e.target, { signal: selection.signal, maxBytes: this.diffBasisMaxBytes })
        } catch {
          before = undefined
        }
      }
      // Text as `readText` takes it (UTF-8, no NUL in the sample, the BOM dropped), LF-normalized as an edit's outcome is.
      const afterText = decodeTextOrNull(after)
      const beforeText = before === undefined ? '' : decodeTextOrNull(before)
      if (afterText === null || beforeText === null) {
        out.push({ ...change, size: after.length, bytes: after })
        continue
      }
      if (e.base.type === 'file' && before === undefined) {
        out.push({ ...change, size: after.length })
        continue
      }
      const diff = changeDiff(normalizeLf(beforeText), normalizeLf(afterText))
      out.push({ ...change, size: after.length, diff: diff.text, added: diff.added, removed: diff.removed })
    }
    return out
  }

  /** Drops the selected changes: the overlay shows the store's content there again. */
  discard(selection: OverlaySelection = {}): Promise<number> {
    return this.#mutate({ verb: 'write', path: this.#stateName, signal: selection.signal }, async () => {
      const chosen = await this.#selected(selection)
      const dropped: string[] = []
      for (const e of chosen) {
        if (e.blob !== undefined) dropped.push(e.blob)
        this.#drop(e)
      }
      await this.#save(dropped)
      return chosen.length
    })
  }

  /**
   * Applies the selected changes to the store. First every base is checked against the store: a
   * path whose store content is no longer what the overlay was based on is a conflict, and nothing
   * is applied. Then the changes are applied, each guarded by its base (so a writer that slips in
   * between still fails the step): directories first, then files, then removes, deepest last. If a
   * step fails, the steps applied are undone in reverse where their own guards allow (a file
   * written back, a created one removed; a removed directory cannot come back), and the report
   * says exactly what stands. Committed changes leave the overlay; after a failure it keeps all.
   */
  commit(selection: OverlaySelection = {}): Promise<OverlayCommitReport> {
    return this.#mutate({ verb: 'write', path: this.#stateName, signal: selection.signal }, async () => {
      const signal = selection.signal
      const lower = this.inner
      const chosen = this.#outermostFirst(
        (await this.#selected(selection, true)).filter((e) => !(e.kind === 'directory' && e.base.type === 'directory' && !e.opaque)),
      )
      const conflicts: { path: string; base: OverlayBase; now: OverlayBase }[] = []
      const previous = new Map<Entry, Uint8Array>()
      const already: { step: OverlayStep; entry: Entry }[] = []
      const pending: Entry[] = []
      // An entry below a directory the commit replaces (removes, then makes again) is made anew: nothing of the store's is left there.
      const replacedDirs = chosen.filter((d) => d.kind === 'directory' && d.opaque)
      const fresh = new Set(chosen.filter((e) => replacedDirs.some((d) => d !== e && this.contains(d.target, e.target))))
      for (const e of chosen) {
        const info = await this.#lowerInfo(e.target, signal)
        const now = baseOf(info)
        // What the store already holds (a commit that was cut short, run again; the same change made by someone else) is done.
        if (await this.#landed(e, info, signal)) {
          already.push({ step: { path: e.target.displayPath, kind: this.#kind(e) }, entry: e })
          continue
        }
        // A directory's version is compared only where the commit removes what the store has below it.
        const removesBelow = e.kind === 'whiteout' || (e.kind === 'directory' && e.opaque) || e.kind === 'file'
        let same = now.type === e.base.type && (now.type === 'absent' || now.type === 'directory' || now.version === e.base.version)
        // Where the commit removes a directory of the store, what it holds must be what the overlay saw.
        if (same && now.type === 'directory' && removesBelow && e.tree !== undefined)
          same = (await this.#lowerTree(e.target, signal)).join('\n') === e.tree.join('\n')
        if (!same) {
          conflicts.push({ path: e.target.displayPath, base: e.base, now })
          continue
        }
        pending.push(e)
        // What a step replaces or removes is kept to undo it, where it fits a read (else the step cannot be undone).
        if (info?.type === 'file' && e.kind !== 'directory' && !fresh.has(e) && (info.size ?? 0) <= this.maxTextBytes) {
          previous.set(e, await super.loadBytes(e.target, { signal, maxBytes: this.maxTextBytes }))
        }
      }
      if (conflicts.length > 0) return { outcome: 'conflict', standing: [], already: [], conflicts, undone: [] }
      const steps: { step: OverlayStep; entry: Entry; apply: () => Promise<Undo | undefined> }[] = []
      // What a file or a directory replaces is removed in its own step; plain removes come last, deepest first.
      for (const e of pending) {
        const step = { path: e.target.displayPath, kind: this.#kind(e) }
        if (e.kind === 'directory') steps.push({ step, entry: e, apply: () => this.#applyDirectory(lower, e, fresh.has(e), signal) })
        if (e.kind === 'file') steps.push({ step, entry: e, apply: () => this.#applyFile(lower, e, previous.get(e), fresh.has(e), signal) })
      }
      // A remove below a directory the commit replaces is done by that directory's step.
      for (const e of pending.filter((r) => r.kind === 'whiteout' && !fresh.has(r)).reverse()) {
        steps.push({ step: { path: e.target.displayPath, kind: 'remove' }, entry: e, apply: () => this.#applyRemove(lower, e, previous.get(e), signal) })
      }
      const applied: { step: OverlayStep; entry: Entry; undo: Undo | undefined }[] = []
      for (const { step, entry, apply } of steps) {
        try {
          applied.push({ step, entry, undo: await apply() })
        } catch (err) {
          const error = isFsError(err) ? err : FsError.io('write', step.path, String(err))
          const undone: OverlayStep[] = []
          const standing: OverlayStep[] = []
          const rebased: Entry[] = []
          for (const done of applied.reverse()) {
            try {
              if (done.undo === undefined) throw new Error('cannot be undone')
              await done.undo()
              undone.push(done.step)
            } catch {
              standing.push(done.step)
            }
            // Undone, the store holds the base's content under a version of its own; standing, the change: either
            // way the entry is now based on what the store holds, so that running the commit again goes on from it.
            rebased.push(done.entry)
          }
          rebased.push(...already.map((a) => a.entry))
          await this.#settle([], await this.#storeStates(rebased, signal))
          return { outcome: 'failed', standing: standing.reverse(), already: already.map((a) => a.step), conflicts: [], failure: { step, error }, undone }
        }
      }
      const done = [...applied.map((a) => a.entry), ...already.map((a) => a.entry)]
      await this.#settle(done, await this.#storeStates(done, signal))
      return { outcome: 'committed', standing: applied.map((a) => a.step), already: already.map((a) => a.step), conflicts: [], undone: [] }
    })
  }

  /** What the store holds at each entry's place now, as the base and record of what is below it a change there would start from. */
  async #storeStates(entries: readonly Entry[], signal: AbortSignal | undefined): Promise<Map<Entry, { base: OverlayBase; tree: string[] | undefined }>> {
    const states = new Map<Entry, { base: OverlayBase; tree: string[] | undefined }>()
    for (const e of entries) {
      const at = await this.#lowerTarget(this.inner, e, signal)
      const base = baseOf(await this.#lowerInfo(at, signal))
      states.set(e, { base, tree: base.type === 'directory' ? await this.#lowerTree(at, signal) : undefined })
    }
    return states
  }

  /**
   * Saves the state after a commit. Each entry of `done` (its change now the store's) leaves the
   * overlay, unless it was changed again (by another process, whose save came in between): then it
   * stays, based on what the store holds now. Each entry of `states` not done takes what the store
   * holds now as its base. Another process's save in between: the state is read again and the same
   * applied to it (up to 5 times), so that neither loses a change.
   */
  async #settle(done: readonly Entry[], states: ReadonlyMap<Entry, { base: OverlayBase; tree: string[] | undefined }>): Promise<void> {
    const finished = new Set(done)
    for (let attempt = 0; attempt < 5; attempt++) {
      const dropped: string[] = []
      for (const [e, state] of states) {
        const now = this.#entries.get(e.target.targetKey)
        if (now === undefined) continue
        if (finished.has(e) && now.version === e.version && now.kind === e.kind && now.blob === e.blob) {
          if (now.blob !== undefined) dropped.push(now.blob)
          this.#drop(now)
          continue
        }
        now.base = state.base
        now.tree = state.tree
        // Based on what it replaced, a directory over the store's own hides it again only where it replaced one.
        if (now.kind === 'directory') now.opaque = state.base.type !== 'absent' && now.opaque
      }
      if (await this.#trySave(dropped)) return
    }
    throw FsError.io('write', this.#stateName, 'other processes kept changing the overlay; the commit landed, its record did not: run it again', {
      retryable: true,
    })
  }

  /** Where `e` is in the store: its target, or for a key of the overlay's own, what its path names there now. */
  async #lowerTarget(lower: FileSystem, e: Entry, signal: AbortSignal | undefined): Promise<FsTarget> {
    return isMinted(e.target.targetKey) ? lower.resolve(e.target.displayPath, { signal }) : e.target
  }

  /** Whether the store already holds what `e` would make it (`info`: the store's `stat` there). */
  async #landed(e: Entry, info: FsInfo | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    if (e.kind === 'whiteout') return info === undefined
    if (e.kind === 'directory') return info?.type === 'directory' && !e.opaque
    if (info?.type !== 'file' || info.size !== e.size) return false
    const current = await super.loadBytes(e.target, { signal, maxBytes: this.maxTextBytes })
    return Buffer.from(current).equals(await this.#upper.readBlob(e.blob as string))
  }

  async #applyDirectory(lower: FileSystem, e: Entry, fresh: boolean, signal: AbortSignal | undefined): Promise<Undo | undefined> {
    const at = await this.#lowerTarget(lower, e, signal)
    // A directory where the store has a file, or an empty one in place of the store's: what was there goes first (a
    // directory's content was checked against what the overlay saw, its own version is no guard on every store).
    if (e.base.type === 'file' && !fresh) await lower.remove(at, { expected: { version: e.base.version as FsVersion }, signal })
    if (e.base.type === 'directory' && !fresh) await lower.remove(at, { recursive: true, signal })
    const { created } = await lower.createDirectory(at, { signal })
    if (!created || e.base.type !== 'absent') return undefined
    return async () => {
      await lower.remove(at, { signal })
      return undefined
    }
  }

  /** Writes `e`'s content; `fresh`: in a directory the commit made anew, where nothing of the store's is left. */
  async #applyFile(lower: FileSystem, e: Entry, previous: Uint8Array | undefined, fresh: boolean, signal: AbortSignal | undefined): Promise<Undo | undefined> {
    const at = await this.#lowerTarget(lower, e, signal)
    const bytes = await this.#upper.readBlob(e.blob as string)
    if (e.base.type === 'directory' && !fresh) await lower.remove(at, { recursive: true, signal })
    const expected =
      e.base.type === 'file' && !fresh ? ({ kind: 'replaceIfVersion', version: e.base.version as FsVersion } as const) : ({ kind: 'createIfAbsent' } as const)
    const { version } = await lower.writeBytes(at, bytes, { expected, signal })
    if (e.base.type === 'directory' && !fresh) return undefined
    if (previous === undefined || fresh) {
      return async () => {
        await lower.remove(at, { expected: { version }, signal })
        return undefined
      }
    }
    return async () => (await lower.writeBytes(at, previous, { expected: { kind: 'replaceIfVersion', version }, signal })).version
  }

  async #applyRemove(lower: FileSystem, e: Entry, previous: Uint8Array | undefined, signal: AbortSignal | undefined): Promise<Undo | undefined> {
    const at = await this.#lowerTarget(lower, e, signal)
    if (e.base.type === 'directory') {
      await lower.remove(at, { recursive: true, signal })
      return undefined
    }
    await lower.remove(at, { expected: { version: e.base.version as FsVersion }, signal })
    if (previous === undefined) return undefined
    return async () => (await lower.writeBytes(at, previous, { expected: { kind: 'createIfAbsent' }, signal })).version
  }
}

/** Undoes a step; resolves to the version a file written back has (the entry's new base). */
type Undo = () => Promise<FsVersion | undefined>
