import { setMaxListeners } from 'node:events'
import { FsError, isFsError, type FileSystem, type FsDirEntry, type FsInfo, type FsTarget, type FsTargetKey } from '@seamfs/core'
// The listing order itself, applied to whole relative paths: glob and grep list in the order `listDir` would.
import { compareNames } from '@seamfs/core/backend'
import { Minimatch } from 'minimatch'
import { inOrder, mapInOrder } from './bounded.js'
import { MAX_SEARCH_CONCURRENCY } from './config.js'
import type { IgnoreScope, Ignores } from './ignore-files.js'
import { isToolDeadline, ToolInputError } from './results.js'
import { resolveIn } from './tool-kit.js'
import type { ToolContext, ToolDeps, ToolResult } from './types.js'

/** Version-control metadata directories the walk never enters. */
export const VCS_DIRS: ReadonlySet<string> = new Set(['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'])

/** Listeners one search's signal may hold before Node warns: a few per call in flight, at the highest concurrency. */
const SIGNAL_LISTENERS = 8 * MAX_SEARCH_CONCURRENCY

/** The search ran out of its `searchTimeoutMs` budget. Reported by the tool, never thrown out of `execute`. */
export class SearchTimeout extends Error {
  override readonly name = 'SearchTimeout'

  /** What was running when time ran out: the regular expression on a thread, or the walk (a tree too large). */
  constructor(
    message: string,
    readonly slowPart: 'pattern' | 'tree' = 'tree',
  ) {
    super(message)
  }
}

/** What a search that ran out of its budget returns: an error without a code, and no value. */
export function timeoutResult(err: SearchTimeout, cause: string, remedy: string): ToolResult<never> {
  return { text: `Error: ${err.message} (${cause}); ${remedy}`, isError: true }
}

/**
 * A store request that has waited this long (ms) when a search runs out of time makes the store the
 * slow part, whatever else was running (half the budget, for short budgets: a store that answers
 * each request in a fraction of it is slow, not stalled, and the tree is what was too large).
 */
const STORE_STALL_MS = 2000

/** What a search's calls wait for: the store, or the regular expression's thread. */
export type SearchWait = 'store' | 'regex'

/**
 * The budget of one search: the caller's signal (which carries the tools' call deadline) plus a
 * wall-clock deadline. `signal` aborts on either, so backend calls stop too; `check()` also reads
 * the clock, because a walk over an in-memory backend runs in microtasks only and no timer can fire
 * until it yields.
 *
 * When time runs out (its own budget or the call's deadline), the search blames what it was
 * waiting for: a store request left unanswered for a while is a retryable
 * `FS_IO_ERROR` ("the store did not answer"), never the model's pattern; a pattern still running
 * on a thread, or a tree too large to finish, is a {@link SearchTimeout}.
 */
export class SearchControl {
  readonly signal: AbortSignal
  readonly #caller: AbortSignal | undefined
  readonly #expiry = new AbortController()
  readonly #deadline: number
  readonly #timer: ReturnType<typeof setTimeout>
  /** Start times of the store requests in flight (a multiset: equal times counted). */
  readonly #storeWaits = new Map<number, number>()
  #regexWaits = 0
  #stopError: Error | undefined

  constructor(
    readonly tool: 'glob' | 'grep',
    readonly timeoutMs: number,
    caller: AbortSignal | undefined,
  ) {
    this.#caller = caller
    this.#deadline = Date.now() + timeoutMs
    this.#timer = setTimeout(() => this.#expiry.abort(), timeoutMs)
    this.signal = caller === undefined ? this.#expiry.signal : AbortSignal.any([caller, this.#expiry.signal])
    // Every call in flight (up to `searchConcurrency`, each through `race` and the backend) listens on it:
    // more than Node's default of 10 is expected, not a leak, and must not print a warning.
    setMaxListeners(SIGNAL_LISTENERS, this.signal)
  }

  /** Whether the caller aborted or the deadline passed. */
  get stopped(): boolean {
    if (!this.#expiry.signal.aborted && Date.now() >= this.#deadline) this.#expiry.abort()
    return this.signal.aborted
  }

  /**
   * The error that ends a stopped search: `FS_ABORTED` for the caller's own abort; when time ran
   * out, a retryable `FS_IO_ERROR` if a store request had long gone unanswered, else a {@link SearchTimeout}.
   */
  error(): Error {
    // Decided once, when the search stops, while what it waited for is still in flight; every later caller gets the same.
    return (this.#stopError ??= this.#blame())
  }

  #blame(): Error {
    const caller = this.#caller
    if (caller?.aborted === true && !isToolDeadline(caller.reason)) return new FsError('FS_ABORTED', `${this.tool} aborted`, { cause: caller.reason })
    const ms = caller?.aborted === true && isToolDeadline(caller.reason) ? caller.reason.ms : this.timeoutMs
    const stalled = this.#longestStoreWait()
    if (stalled >= Math.min(STORE_STALL_MS, ms / 2)) {
      const reason = `${this.tool} stopped after ${ms} ms: the store did not answer in time (a request waited ${Math.round(stalled)} ms; it may be slow, overloaded or unreachable); try again later`
      return new FsError('FS_IO_ERROR', reason, { retryable: true })
    }
    return new SearchTimeout(`${this.tool} stopped after ${ms} ms`, this.#regexWaits > 0 ? 'pattern' : 'tree')
  }

  /** Throws the stopping error when the search must end. */
  check(): void {
    if (this.stopped) throw this.error()
  }

  /** `err`, or the stopping error when the search was stopped (a backend's own `FS_ABORTED` among them). */
  translate(err: unknown): unknown {
    return this.stopped ? this.error() : err
  }

  /**
   * `promise`, unless the search stops first: then the stopping error (a hung backend call cannot
   * hold the tool). `wait` says what it waits for, so a stop can blame the right party.
   */
  race<T>(promise: Promise<T>, wait: SearchWait = 'store'): Promise<T> {
    const settled = promise.catch((err: unknown) => {
      throw this.translate(err)
    })
    if (this.stopped) {
      settled.catch(() => undefined)
      return Promise.reject(this.error())
    }
    const untrack = this.#track(wait)
    let onStop = (): void => undefined
    const stop = new Promise<never>((_, reject) => {
      onStop = () => reject(this.error())
      this.signal.addEventListener('abort', onStop, { once: true })
    })
    return Promise.race([settled, stop]).finally(() => {
      untrack()
      this.signal.removeEventListener('abort', onStop)
    })
  }

  #track(wait: SearchWait): () => void {
    if (wait === 'regex') {
      this.#regexWaits++
      return () => void this.#regexWaits--
    }
    const since = performance.now()
    this.#storeWaits.set(since, (this.#storeWaits.get(since) ?? 0) + 1)
    return () => {
      const n = (this.#storeWaits.get(since) ?? 1) - 1
      if (n === 0) this.#storeWaits.delete(since)
      else this.#storeWaits.set(since, n)
    }
  }

  /** How long the oldest store request in flight has waited (ms; 0 when none). */
  #longestStoreWait(): number {
    let oldest = Number.POSITIVE_INFINITY
    for (const since of this.#storeWaits.keys()) oldest = Math.min(oldest, since)
    return oldest === Number.POSITIVE_INFINITY ? 0 : performance.now() - oldest
  }

  /** Ends the search: the timer, and any backend call still in flight (a read-ahead the search no longer waits for). */
  dispose(): void {
    clearTimeout(this.#timer)
    this.#expiry.abort()
  }
}

/** A `/`-separated path relative to the search root, matched like a glob tool: dotfiles included, a slash-less pattern matches basenames. */
export type PathMatcher = (path: string) => boolean

export function pathMatcher(name: string, pattern: string): PathMatcher {
  let compiled: Minimatch
  try {
    const body = pattern.startsWith('./') ? pattern.slice(2) : pattern
    compiled = new Minimatch(body, { dot: true, matchBase: true, nocomment: true, platform: 'linux', braceExpandMax: 10_000 })
  } catch (err) {
    throw new ToolInputError(`${name} is not a valid glob: ${err instanceof Error ? err.message : String(err)}`)
  }
  return (path) => compiled.match(path)
}

/** One file found by {@link walkFiles}. */
export interface WalkedFile {
  /** `/`-separated, relative to the search root. */
  readonly path: string
  readonly target: FsTarget
  readonly size: number | undefined
}

/** Failures of a subdirectory that only mean "nothing to see here" (it vanished, or may not be read). */
const SKIPPABLE = ['FS_NOT_FOUND', 'FS_NOT_DIRECTORY', 'FS_PERMISSION_DENIED', 'FS_NOT_REGULAR_FILE'] as const

export function isSkippable(err: unknown): boolean {
  return SKIPPABLE.some((code) => isFsError(err, code))
}

/** Runs one store call of a search: at once, or when the search's shared limiter lets it (see `Limiter`). */
export type Gate = <T>(call: () => Promise<T>) => Promise<T>

const ungated: Gate = (call) => call()

/**
 * Whether a directory entry is a symbolic link (only asked of backends that have them). An entry a
 * fence will not even `lstat` is treated as one: its listing is then refused, and counted.
 */
async function isLink(fs: FileSystem, target: FsTarget, control: SearchControl, gate: Gate): Promise<boolean> {
  if (!fs.capabilities.symlinks) return false
  try {
    return (await control.race(gate(() => fs.lstat(target.displayPath, { signal: control.signal }))))?.type === 'symlink'
  } catch (err) {
    if (isFsError(err, 'FS_SANDBOX_DENIED')) return true
    if (isSkippable(err)) return false
    throw err
  }
}

/**
 * Whether an `other` entry is one a fence keeps the walk out of: a link leading outside confined
 * reads, which the sandbox lists as `other` (its target's type is not the model's to learn) and
 * whose `stat` it refuses. Only asked of backends that have links.
 */
export async function isFencedOut(fs: FileSystem, target: FsTarget, control: SearchControl, gate: Gate = ungated): Promise<boolean> {
  try {
    await control.race(gate(() => fs.stat(target, { signal: control.signal })))
    return false
  } catch (err) {
    if (isFsError(err, 'FS_SANDBOX_DENIED')) return true
    if (isSkippable(err)) return false
    throw err
  }
}

/** What {@link walkFiles} found, and how many entries below the root a fence kept it out of. */
export interface Walk {
  readonly files: WalkedFile[]
  /**
   * Entries a fence kept out of, skipped and not fatal: links leading outside confined reads (listed
   * as `other`, their `stat` `FS_SANDBOX_DENIED`), and directories whose listing was refused.
   */
  readonly fenced: number
  /** The first {@link NAMED_SKIPS} of those entries' paths (relative to the root), in path order: the footer names them. */
  readonly fencedPaths: string[]
}

/** How many skipped entries a search footer names; the rest it counts. */
export const NAMED_SKIPS = 5

/** Keeps the first {@link NAMED_SKIPS} paths of skipped entries, in path order; counts them all. */
export class Skipped {
  count = 0
  readonly #paths: string[] = []

  add(path: string): void {
    this.count++
    this.#paths.push(path)
    if (this.#paths.length > 4 * NAMED_SKIPS) this.#trim()
  }

  /** Takes in another tally: `count` entries, of which `paths` are the first. */
  addAll(count: number, paths: readonly string[]): void {
    this.count += count
    this.#paths.push(...paths)
    this.#trim()
  }

  /** The first paths in path order. */
  paths(): string[] {
    this.#trim()
    return [...this.#paths]
  }

  #trim(): void {
    this.#paths.sort(compareNames)
    this.#paths.length = Math.min(this.#paths.length, NAMED_SKIPS)
  }
}

interface Dir {
  readonly target: FsTarget
  readonly path: string
  /** The ignore rules in force where it was found (undefined for the root). */
  readonly scope?: IgnoreScope | undefined
}

/** A directory's entries, and the ignore rules in force inside it (when ignore files apply). */
interface Listed {
  readonly entries: FsDirEntry[]
  readonly scope: IgnoreScope | undefined
}

/** What {@link walkFiles} walks, and how. */
export interface WalkOptions {
  readonly fs: FileSystem
  readonly root: FsTarget
  /** The search's budget and stop. */
  readonly control: SearchControl
  /** Which files (by path relative to the root) are kept. */
  readonly accept: PathMatcher
  /** Listings and link checks in flight at a time (default 1). */
  readonly concurrency?: number | undefined
  /** Told of each file `accept`ed as the walk finds it (in the order it finds them), for work that may start before the walk ends. */
  readonly found?: ((file: WalkedFile) => void) | undefined
  /** How each store call of the walk is run (default: at once). */
  readonly gate?: Gate | undefined
  /** The ignore files that apply (default: none): what they exclude is skipped, an excluded directory never listed. */
  readonly ignores?: Ignores | undefined
}

/**
 * Every file under `root` whose relative path `accept`s, sorted by path in code-point order.
 * Breadth-first through `listDir`; VCS directories are skipped, and so is what `ignores` excludes
 * (each directory's ignore files read with its listing); each directory
 * (by `targetKey`) is entered once, which breaks link loops. Symlinked
 * directories wait until the real tree is walked, so a directory reached both
 * directly and through a link is reported under its real path. The budget is
 * checked before every directory. An entry below the root that a fence keeps out of (a link
 * pointing outside confined reads, or a directory it refuses to list) is skipped and counted; the
 * root itself is not.
 * A level's listings, and then its link checks, run up to `concurrency` at a time (a remote
 * store pays about one round trip per `concurrency` directories); the result is the same as
 * one at a time.
 */
export async function walkFiles(options: WalkOptions): Promise<Walk> {
  const { fs, root, control, accept, concurrency = 1, found: onFound, gate = ungated, ignores } = options
  const found: WalkedFile[] = []
  const fenced = new Skipped()
  const seen = new Set<FsTargetKey>([root.targetKey])
  let level: Dir[] = [{ target: root, path: '' }]
  let links: Dir[] = []
  const list = async (dir: Dir): Promise<Listed> => {
    const entries = await control.race(gate(() => fs.listDir(dir.target, { signal: control.signal })))
    return { entries, scope: await ignores?.enter(dir.path, entries, dir.scope, gate) }
  }
  const check = (): void => control.check()
  while (level.length > 0 || links.length > 0) {
    if (level.length === 0) {
      // The real tree is done: enter the linked directories not seen yet, in path order.
      for (const link of links.sort((a, b) => compareNames(a.path, b.path))) {
        if (seen.has(link.target.targetKey)) continue
        seen.add(link.target.targetKey)
        level.push(link)
      }
      links = []
      continue
    }
    const candidates: Dir[] = []
    const others: Dir[] = []
    const linkChecks = (): Promise<boolean[]> => mapInOrder(candidates, concurrency, (dir) => isLink(fs, dir.target, control, gate), check)
    // The level's listings are in flight together; their entries are taken in level order, as one by one.
    let index = 0
    for await (const listed of inOrder(level, concurrency, list, { beforeStart: check })) {
      const dir = level[index++] as Dir
      if (!listed.ok) {
        const err = listed.error
        if (dir.path !== '' && isFsError(err, 'FS_SANDBOX_DENIED')) fenced.add(dir.path)
        else if (dir.path === '' || !isSkippable(err)) {
          // One at a time, the link checks of the directories listed before would have failed first.
          await linkChecks()
          throw err
        }
        continue
      }
      const { entries, scope } = listed.value
      for (const entry of entries) {
        const path = dir.path === '' ? entry.name : `${dir.path}/${entry.name}`
        const vcs = entry.type === 'directory' && VCS_DIRS.has(entry.name)
        if (!vcs && scope !== undefined && ignores?.skips(scope, path, entry.type, accept) === true) continue
        if (entry.type === 'file') {
          if (accept(path)) {
            const file = { path, target: entry.target, size: entry.size }
            found.push(file)
            onFound?.(file)
          }
        } else if (entry.type === 'directory' && !vcs && !seen.has(entry.target.targetKey)) {
          candidates.push({ target: entry.target, path, scope })
        } else if (entry.type === 'other' && fs.capabilities.symlinks) {
          others.push({ target: entry.target, path })
        }
      }
    }
    const outs = await mapInOrder(others, concurrency, (other) => isFencedOut(fs, other.target, control, gate), check)
    outs.forEach((out, i) => out && fenced.add((others[i] as Dir).path))
    // Which directories are links: asked together too, then sorted in level order.
    const linked = await linkChecks()
    const next: Dir[] = []
    candidates.forEach((dir, i) => {
      if (seen.has(dir.target.targetKey)) return
      if (linked[i] === true) {
        links.push(dir)
      } else {
        seen.add(dir.target.targetKey)
        next.push(dir)
      }
    })
    level = next
  }
  return { files: found.sort((a, b) => compareNames(a.path, b.path)), fenced: fenced.count, fencedPaths: fenced.paths() }
}

/** The footer line of skipped fenced entries, naming the first (`named`, as the model may use them), or none. */
export function fencedFooter(count: number, one: string, many: string, named: readonly string[] = []): string | undefined {
  return count === 0 ? undefined : `(${count} ${count === 1 ? one : many} outside the sandbox skipped${namedSkips(count, named)})`
}

/** `: "a", "b" and 3 more`: the paths a footer names, and how many it does not. */
export function namedSkips(count: number, named: readonly string[]): string {
  if (named.length === 0) return ''
  const rest = count - named.length
  return `: ${named.map((path) => JSON.stringify(path)).join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`
}

/** The resolved search root and what it is; a missing root is `FS_NOT_FOUND`. */
export async function searchRoot(deps: ToolDeps, path: string, context: ToolContext, control: SearchControl): Promise<{ target: FsTarget; info: FsInfo }> {
  return statRoot(deps, await control.race(resolveIn(deps, path, { ...context, signal: control.signal })), control)
}

/** What the resolved search root `target` is; a missing root is `FS_NOT_FOUND`. */
export async function statRoot(deps: ToolDeps, target: FsTarget, control: SearchControl): Promise<{ target: FsTarget; info: FsInfo }> {
  const info = await control.race(deps.fs.stat(target, { signal: control.signal }))
  const shown = target.displayPath
  if (info === undefined) throw new FsError('FS_NOT_FOUND', `cannot search "${shown}": not found`, { verb: 'stat', path: shown })
  return { target, info }
}
