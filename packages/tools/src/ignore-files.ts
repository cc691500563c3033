/**
 * What `.gitignore` and `.ignore` files exclude from glob and grep, read through the
 * `FileSystem` contract (so on every backend), bounded, and never failing a search.
 *
 * Where the rules come from: the ignore files of the search root and of every directory the walk
 * enters, and, when the search root is below the workspace (the cwd), those of the directories
 * from the workspace down to the root's parent (read at once, beside the root's listing). Rules of
 * a deeper directory win over a shallower one's, `.ignore` over `.gitignore` in the same directory
 * (as ripgrep), a later line over an earlier one. The search root itself, named by the caller, is
 * never excluded.
 */
import { isFsError, type FileSystem, type FsTarget } from '@seamfs/core'
import { IgnoreRules, parseIgnoreFile, type IgnoreRule } from './gitignore.js'
import { relativeTo, type ShowPath } from './shown-path.js'
import { COUNT, STRING } from './structured.js'
import { namedSkips, Skipped, VCS_DIRS, type Gate, type PathMatcher, type SearchControl } from './walk.js'

/** The ignore files read in each directory, the weakest first. */
export const IGNORE_FILES: readonly string[] = ['.gitignore', '.ignore']

/** The description of the `include_ignored` argument, the same in `glob` and `grep`. */
export const INCLUDE_IGNORED = 'Also search paths that .gitignore and .ignore files exclude (such as node_modules or build output). Defaults to false.'

/** The largest ignore file read, in bytes: a larger one is not applied, and the footer says so. */
export const MAX_IGNORE_FILE_BYTES = 64 * 1024

/** One directory's rules, and how a path below the search root reads relative to that directory. */
interface Level {
  readonly rules: IgnoreRules
  /** UTF-16 units to cut off the front of a path below the root (the directory's own path and its `/`). */
  readonly cut: number
  /** What goes in front instead (a directory above the root: the way down to the root, with its `/`). */
  readonly lead: string
}

/** The rules in force in one directory: its own files' and those of the directories above it. */
export class IgnoreScope {
  static readonly EMPTY = new IgnoreScope([])

  private constructor(
    /** The directories with rules, the shallowest first. */
    readonly levels: readonly Level[],
  ) {}

  /** No rule at all. */
  get empty(): boolean {
    return this.levels.length === 0
  }

  /**
   * This scope with the rules of one more directory, deeper: `dir`, its path below the search root
   * (`''`: the root), or `above`, the way down from a directory above the root to the root.
   */
  with(rules: readonly IgnoreRule[], dir: string, above = ''): IgnoreScope {
    if (rules.length === 0) return this
    const cut = dir === '' ? 0 : dir.length + 1
    return new IgnoreScope([...this.levels, { rules: new IgnoreRules(rules), cut, lead: above === '' ? '' : `${above}/` }])
  }

  /** Whether `path` (below the search root, `/`-separated) is excluded: the deepest directory whose rules match it decides. */
  excludes(path: string, isDir: boolean): boolean {
    const name = path.slice(path.lastIndexOf('/') + 1)
    for (let i = this.levels.length - 1; i >= 0; i--) {
      const level = this.levels[i] as Level
      const hit = level.rules.lastMatch(level.lead + path.slice(level.cut), name, isDir)
      if (hit !== undefined) return !hit.negated
    }
    return false
  }
}

/** A directory entry as the walks see it. */
interface Entry {
  readonly name: string
  readonly type: 'file' | 'directory' | 'other'
  readonly target: FsTarget
  readonly size?: number | undefined
}

/** What reading one ignore file gave: its rules, nothing (no such file), or word that it could not be applied. */
type Read = IgnoreRule[] | 'absent' | 'unapplied'

/** Failures that mean there is no ignore file to apply: it vanished, is no file, or is not the search's to read. */
const ABSENT = ['FS_NOT_FOUND', 'FS_NOT_DIRECTORY', 'FS_NOT_REGULAR_FILE', 'FS_SANDBOX_DENIED'] as const

/** One ignore file's rules, read within {@link MAX_IGNORE_FILE_BYTES}; a failure is never the search's, but its stop is. */
async function readRules(fs: FileSystem, target: FsTarget, size: number | undefined, control: SearchControl, gate: Gate): Promise<Read> {
  if (size !== undefined && size > MAX_IGNORE_FILE_BYTES) return 'unapplied'
  let bytes: Uint8Array
  try {
    bytes = await control.race(gate(() => fs.readBytes(target, { signal: control.signal, maxBytes: MAX_IGNORE_FILE_BYTES })))
  } catch (err) {
    if (control.stopped) throw control.error()
    return ABSENT.some((code) => isFsError(err, code)) ? 'absent' : 'unapplied'
  }
  // Lenient: a byte that is not UTF-8 only spoils the pattern it is in. A leading BOM is dropped.
  return parseIgnoreFile(new TextDecoder().decode(bytes))
}

const joined = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`)

/** Where the search root sits below the workspace, to read the ignore files above it. */
interface Workspace {
  /** The workspace's display path (the cwd). */
  readonly display: string
  /** The search root's path below it, `/`-separated, not empty. */
  readonly below: string
}

/** Where `root` sits below the workspace `cwd`; undefined when it is the workspace, outside it, or in a version-control directory. */
function workspaceOf(cwd: string | undefined, root: FsTarget): Workspace | undefined {
  const below = relativeTo(cwd, root.displayPath)
  if (cwd === undefined || below === undefined || below === '' || below.split('/').some((segment) => VCS_DIRS.has(segment))) return undefined
  return { display: cwd, below }
}

/**
 * The ignore files of a search of `root` (a directory, or so it may turn out), the ones above it
 * read as soon as `cwd` (the workspace's display path) is known, beside the root's listing.
 */
export function searchIgnores(fs: FileSystem, control: SearchControl, cwd: Promise<string | undefined>, root: FsTarget): Ignores {
  // Above the root only on this machine's disk, where a look costs microseconds: on a remote store
  // each costs a round trip (S3 two) that a search would wait for, and only the ignore files at and
  // below the root apply there.
  const workspace = fs.capabilities.processPath === true ? cwd.then((c) => workspaceOf(c, root)) : Promise.resolve(undefined)
  return new Ignores(fs, control, workspace)
}

/**
 * One search's ignore files: the rules in force as the walk goes down, and its tallies (the
 * entries excluded and the ignore files not applied) for the footers.
 */
export class Ignores {
  /** Entries excluded (directories, and files the search would have kept), by their path below the root. */
  readonly excluded = new Skipped()
  /** Ignore files below the root that were not applied (too large, or unreadable), by their path below the root. */
  readonly unapplied = new Skipped()
  /** Those above the root, by their path below the workspace. */
  readonly unappliedAbove = new Skipped()
  readonly #fs: FileSystem
  readonly #control: SearchControl
  readonly #base: Promise<IgnoreScope>

  /** Starts reading the ignore files above the root (below `workspace`, when the root is below it) at once. */
  constructor(fs: FileSystem, control: SearchControl, workspace: Promise<Workspace | undefined>) {
    this.#fs = fs
    this.#control = control
    this.#base = workspace.then((w) => (w === undefined ? IgnoreScope.EMPTY : this.#above(w)))
    // Awaited by the root's listing; a search that ends before it (a root that is a file) leaves it unobserved.
    this.#base.catch(() => undefined)
  }

  /** The scope of the directories from the workspace down to the root's parent. */
  async #above({ display, below }: Workspace): Promise<IgnoreScope> {
    const parts = below.split('/')
    const dirs = parts.map((_, depth) => ({ dir: parts.slice(0, depth).join('/'), down: parts.slice(depth).join('/') }))
    const base = display.endsWith('/') ? display : `${display}/`
    // One look per name, all at once beside the root's own listing, and a read only where a file is:
    // a listing of a level could be any size, a blind read of a missing name costs more on a remote store.
    const read = async (path: string): Promise<Read> => {
      let info: { readonly type: string; readonly size?: number | undefined } | undefined
      let target: FsTarget
      try {
        target = await this.#control.race(this.#fs.resolve(`${base}${path}`, { signal: this.#control.signal }))
        info = await this.#control.race(this.#fs.stat(target, { signal: this.#control.signal }))
      } catch (err) {
        if (this.#control.stopped) throw this.#control.error()
        return ABSENT.some((code) => isFsError(err, code)) ? 'absent' : 'unapplied'
      }
      if (info?.type !== 'file') return 'absent'
      return readRules(this.#fs, target, info.size, this.#control, (call) => call())
    }
    const files = dirs.map(({ dir }) => IGNORE_FILES.map((name) => joined(dir, name)))
    const reads = await Promise.all(files.map((paths) => Promise.all(paths.map(read))))
    let scope = IgnoreScope.EMPTY
    dirs.forEach(({ down }, d) => {
      scope = scope.with(this.#rules(reads[d] ?? [], files[d] ?? [], this.unappliedAbove), '', down)
    })
    return scope
  }

  /** The rules of one directory's ignore files as read (in {@link IGNORE_FILES} order, at `paths`), those not applied tallied in `unapplied`. */
  #rules(reads: readonly Read[], paths: readonly string[], unapplied: Skipped): IgnoreRule[] {
    return reads.flatMap((got, f) => {
      if (got === 'unapplied') unapplied.add(paths[f] as string)
      return typeof got === 'string' ? [] : got
    })
  }

  /**
   * The scope inside the directory at `dir` (its path below the root; `''`: the root) listed as
   * `entries`: the scope it was found in (`outer`; the root's is the ignore files above it) with
   * the rules of its own ignore files, which are read (at once, through `gate`).
   */
  async enter(dir: string, entries: readonly Entry[], outer: IgnoreScope | undefined, gate: Gate): Promise<IgnoreScope> {
    const files = IGNORE_FILES.map((name) => entries.find((e) => e.name === name && e.type === 'file'))
    const reads = await Promise.all(
      files.map((e): Promise<Read> => (e === undefined ? Promise.resolve('absent') : readRules(this.#fs, e.target, e.size, this.#control, gate))),
    )
    const scope = outer ?? (await this.#control.race(this.#base))
    const paths = IGNORE_FILES.map((name) => joined(dir, name))
    return scope.with(this.#rules(reads, paths, this.unapplied), dir)
  }

  /**
   * Whether the walk skips an entry at `path` (below the root) in `scope`: excluded by its rules.
   * An excluded directory, or a file the search would have kept (`accept`), is counted. The
   * search's budget is checked first: a huge set of patterns makes each entry cost.
   */
  skips(scope: IgnoreScope, path: string, type: Entry['type'], accept: PathMatcher): boolean {
    if (scope.empty) return false
    this.#control.check()
    if (!scope.excludes(path, type === 'directory')) return false
    if (type === 'directory' || (type === 'file' && accept(path))) this.excluded.add(path)
    return true
  }
}

/** What a search's value says of its ignore files: each pair is there only when it counts something. */
export interface IgnoreReport {
  /** Entries below the root that ignore files exclude, skipped (a directory not entered; a file only if the search would have kept it). */
  readonly ignoredEntries?: number
  /** The first of those (at most five, in path order), each a path the other tools accept: the footer names them. */
  readonly ignoredPaths?: string[]
  /** Ignore files not applied: larger than {@link MAX_IGNORE_FILE_BYTES}, or unreadable. */
  readonly unappliedIgnoreFiles?: number
  /** The first of those (at most five, in path order), as the other tools accept them. */
  readonly unappliedIgnorePaths?: string[]
}

/** The report of a search's ignore files (none when `ignores` is undefined: ignored paths were included), its paths shown with `show`. */
export function ignoreReport(ignores: Ignores | undefined, show: ShowPath): IgnoreReport {
  if (ignores === undefined) return {}
  const { excluded, unapplied, unappliedAbove } = ignores
  const files = new Skipped()
  files.addAll(unapplied.count, unapplied.paths().map(show))
  files.addAll(unappliedAbove.count, unappliedAbove.paths())
  return {
    ...(excluded.count > 0 && { ignoredEntries: excluded.count, ignoredPaths: excluded.paths().map(show) }),
    ...(files.count > 0 && { unappliedIgnoreFiles: files.count, unappliedIgnorePaths: files.paths() }),
  }
}

/** The JSON Schema members of an {@link IgnoreReport}, and which are optional (all). */
export const IGNORE_REPORT_SCHEMA = {
  properties: {
    ignoredEntries: COUNT,
    ignoredPaths: { type: 'array', items: STRING },
    unappliedIgnoreFiles: COUNT,
    unappliedIgnorePaths: { type: 'array', items: STRING },
  },
  optional: ['ignoredEntries', 'ignoredPaths', 'unappliedIgnoreFiles', 'unappliedIgnorePaths'],
} as const

/** A report's members as plain JSON (arrays copied). */
export function ignoreContent(report: IgnoreReport): Record<string, unknown> {
  const { ignoredEntries, ignoredPaths, unappliedIgnoreFiles, unappliedIgnorePaths } = report
  return {
    ...(ignoredEntries !== undefined && { ignoredEntries, ignoredPaths: [...(ignoredPaths ?? [])] }),
    ...(unappliedIgnoreFiles !== undefined && { unappliedIgnoreFiles, unappliedIgnorePaths: [...(unappliedIgnorePaths ?? [])] }),
  }
}

/** The footer lines of a report: what ignore files skipped and how to search it, and the ignore files not applied. */
export function ignoreFooters(report: IgnoreReport): string[] {
  const footers: string[] = []
  const n = report.ignoredEntries ?? 0
  if (n > 0) {
    const what = n === 1 ? '1 path' : `${n} paths`
    footers.push(
      `(${what} ignored by .gitignore or .ignore files skipped${namedSkips(n, report.ignoredPaths ?? [])}; set include_ignored to true to search ${n === 1 ? 'it' : 'them'})`,
    )
  }
  const m = report.unappliedIgnoreFiles ?? 0
  if (m > 0) {
    const what = m === 1 ? '1 ignore file' : `${m} ignore files`
    footers.push(`(${what} not applied (over ${MAX_IGNORE_FILE_BYTES} bytes, or unreadable)${namedSkips(m, report.unappliedIgnorePaths ?? [])})`)
  }
  return footers
}
