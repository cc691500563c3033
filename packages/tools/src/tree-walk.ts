/**
 * glob and grep over a store that lists a subtree at once (`capabilities.listTree: 'native'`, S3's
 * prefix listing): the search root listed with one `listTree` instead of a `stat` and a `listDir` per
 * directory, and the answer of the directory walk ({@link walkFiles}) from it: the same files under
 * the same paths, the same fenced count.
 */
import { isFsError, type FileSystem, type FsInfo, type FsTarget, type FsTargetKey, type FsTreeEntry } from '@seamfs/core'
import { compareNames } from '@seamfs/core/backend'
import { mapInOrder } from './bounded.js'
import type { IgnoreScope, Ignores } from './ignore-files.js'
import { resolveIn } from './tool-kit.js'
import type { ToolContext, ToolDeps } from './types.js'
import {
  isFencedOut,
  isSkippable,
  Skipped,
  statRoot,
  VCS_DIRS,
  walkFiles,
  type Gate,
  type PathMatcher,
  type SearchControl,
  type Walk,
  type WalkedFile,
} from './walk.js'

/** What the walk never enters: listed, never entered, by the store itself where it can. */
const PRUNE: readonly string[] = [...VCS_DIRS]

/** The search root: resolved, what it is, and (a directory of a store that lists trees) its listing, already asked for. */
export interface OpenedRoot {
  readonly target: FsTarget
  readonly info: Pick<FsInfo, 'type' | 'size'>
  readonly tree?: AsyncIterable<FsTreeEntry[]> | undefined
}

/** The search root `path`, resolved (see {@link openRoot}). */
export function resolveRoot(deps: ToolDeps, path: string, context: ToolContext, control: SearchControl): Promise<FsTarget> {
  return control.race(resolveIn(deps, path, { ...context, signal: control.signal }))
}

/**
 * The search root, resolved ({@link resolveRoot}). Where the store lists trees at once, the root's listing is asked for
 * at once, without a `stat` first: a directory answers with its first page. Anything else (a file,
 * nothing there, a directory that cannot be listed) is then stat-ed, and the search goes on as the
 * directory walk's would, with its answers and its errors.
 */
export async function openRoot(deps: ToolDeps, target: FsTarget, control: SearchControl): Promise<OpenedRoot> {
  if (deps.fs.capabilities.listTree === 'native') {
    try {
      const tree = await control.race(deps.fs.listTree(target, { prune: PRUNE, signal: control.signal }))
      return { target, info: { type: 'directory' }, tree }
    } catch {
      control.check()
    }
  }
  return statRoot(deps, target, control)
}

/** What {@link searchFiles} searches. */
export interface SearchFilesOptions {
  readonly fs: FileSystem
  readonly root: OpenedRoot
  readonly control: SearchControl
  readonly accept: PathMatcher
  readonly concurrency: number
  /** Told of each file found, as it is found (see `WalkOptions.found`). */
  readonly found?: ((file: WalkedFile) => void) | undefined
  /** How each store call is run (see `WalkOptions.gate`). */
  readonly gate?: Gate | undefined
  /** The ignore files that apply (see `WalkOptions.ignores`). */
  readonly ignores?: Ignores | undefined
}

const ungated: Gate = (call) => call()

/** Every file below the root whose path `accept`s, in path order: from its tree listing where it has one, else the directory walk. */
export function searchFiles(options: SearchFilesOptions): Promise<Walk> {
  const { fs, root, control, accept, concurrency, found, gate = ungated, ignores } = options
  if (root.tree === undefined) return walkFiles({ fs, root: root.target, control, accept, concurrency, found, gate, ignores })
  return treeFiles({ fs, control, accept, concurrency, found, gate, ignores }, { target: root.target, path: '', tree: root.tree })
}

/** What {@link treeFiles} searches with. */
interface TreeSearch {
  readonly fs: FileSystem
  readonly control: SearchControl
  readonly accept: PathMatcher
  readonly concurrency: number
  readonly found: ((file: WalkedFile) => void) | undefined
  readonly gate: Gate
  readonly ignores: Ignores | undefined
}

interface Branch {
  readonly target: FsTarget
  /** `/`-separated, below the search root (`''`: the root). */
  readonly path: string
  /** Its listing, already asked for (the root's). */
  readonly tree?: AsyncIterable<FsTreeEntry[]> | undefined
  /** The ignore rules in force where it was found (undefined for the root). */
  readonly scope?: IgnoreScope | undefined
}

const joined = (dir: string, path: string): string => (dir === '' ? path : `${dir}/${path}`)
const parentOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')))
const byPath = (a: { readonly path: string }, b: { readonly path: string }): number => compareNames(a.path, b.path)

/**
 * The directory walk's answer from tree listings. Its order of discovery is the walk's: the real
 * tree first (one listing), then the linked directories not seen yet, in path order, each a tree of
 * its own, a wave at a time (the links found in a wave wait for the next). A directory is entered
 * once, under the first path that reaches it in that order: the links of a wave are claimed before
 * any of them is listed, so a tree leaves out what another link of its wave claimed.
 */
async function treeFiles(search: TreeSearch, root: Branch): Promise<Walk> {
  const { fs, control, accept, concurrency, gate, ignores } = search
  const found: WalkedFile[] = []
  const fenced = new Skipped()
  const seen = new Set<FsTargetKey>([root.target.targetKey])
  let wave: Branch[] = [root]
  while (wave.length > 0) {
    const links: Branch[] = []
    const others: { readonly target: FsTarget; readonly path: string }[] = []
    for (const branch of wave) {
      let entries: FsTreeEntry[]
      try {
        entries = await collect(search, branch)
      } catch (err) {
        const final = control.translate(err)
        if (branch.path !== '' && isFsError(final, 'FS_SANDBOX_DENIED')) fenced.add(branch.path)
        else if (branch.path === '' || !isSkippable(final)) throw final
        continue
      }
      const scopes = ignores === undefined ? undefined : await treeScopes(search, ignores, branch, entries, seen)
      // Claimed directories (seen already) are left out with everything below them.
      const claimed: string[] = []
      for (const entry of entries.sort(byPath)) {
        if (claimed.some((dir) => entry.path.startsWith(`${dir}/`))) continue
        const path = joined(branch.path, entry.path)
        const key = entry.target.targetKey
        const scope = scopes?.get(parentOf(entry.path))
        const vcs = entry.type === 'directory' && VCS_DIRS.has(entry.name)
        if (scopes !== undefined && !vcs) {
          // Below an excluded directory, which the directory walk would never have listed; or excluded itself.
          if (scope === undefined || ignores?.skips(scope, path, entry.type, accept) === true) continue
        }
        if (entry.type === 'file') {
          if (accept(path)) {
            const file = { path, target: entry.target, size: entry.size }
            found.push(file)
            search.found?.(file)
          }
        } else if (entry.type === 'directory') {
          if (VCS_DIRS.has(entry.name)) continue
          if (entry.link === true) {
            if (!seen.has(key)) links.push({ target: entry.target, path, scope })
          } else if (seen.has(key)) claimed.push(entry.path)
          else seen.add(key)
        } else if (fs.capabilities.symlinks) {
          others.push({ target: entry.target, path })
        }
      }
    }
    const check = (): void => control.check()
    const outs = await mapInOrder(others, concurrency, (other) => isFencedOut(fs, other.target, control, gate), check)
    outs.forEach((out, i) => out && fenced.add(others[i]!.path))
    wave = []
    for (const link of links.sort(byPath)) {
      if (seen.has(link.target.targetKey)) continue
      seen.add(link.target.targetKey)
      wave.push(link)
    }
  }
  return { files: found.sort(byPath), fenced: fenced.count, fencedPaths: fenced.paths() }
}

/**
 * The ignore rules in force in each directory of a branch's listing that the directory walk would
 * list (by its path below the branch; `''`: the branch), a depth at a time, each directory's
 * ignore files read as it would read them: not in a directory excluded, below one, a link, a
 * version-control directory, or one already seen (claimed).
 */
async function treeScopes(
  search: TreeSearch,
  ignores: Ignores,
  branch: Branch,
  entries: readonly FsTreeEntry[],
  seen: ReadonlySet<FsTargetKey>,
): Promise<Map<string, IgnoreScope>> {
  const children = new Map<string, FsTreeEntry[]>()
  for (const entry of entries) {
    const parent = parentOf(entry.path)
    const list = children.get(parent)
    if (list === undefined) children.set(parent, [entry])
    else list.push(entry)
  }
  const scopes = new Map<string, IgnoreScope>()
  let level: { readonly dir: string; readonly outer: IgnoreScope | undefined }[] = [{ dir: '', outer: branch.scope }]
  const check = (): void => search.control.check()
  while (level.length > 0) {
    const entered = await mapInOrder(
      level,
      search.concurrency,
      ({ dir, outer }) => ignores.enter(joined(branch.path, dir), children.get(dir) ?? [], outer, search.gate),
      check,
    )
    const next: typeof level = []
    level.forEach(({ dir }, i) => {
      const scope = entered[i] as IgnoreScope
      scopes.set(dir, scope)
      for (const entry of children.get(dir) ?? []) {
        if (entry.type !== 'directory' || entry.link === true || VCS_DIRS.has(entry.name) || seen.has(entry.target.targetKey)) continue
        if (!scope.excludes(joined(branch.path, entry.path), true)) next.push({ dir: entry.path, outer: scope })
      }
    })
    level = next
  }
  return scopes
}

/** Every entry of a branch's tree listing, each page waited for within the search's budget. */
async function collect({ fs, control, gate }: TreeSearch, branch: Branch): Promise<FsTreeEntry[]> {
  const tree = branch.tree ?? (await control.race(gate(() => fs.listTree(branch.target, { prune: PRUNE, signal: control.signal }))))
  const pages = tree[Symbol.asyncIterator]()
  const entries: FsTreeEntry[] = []
  let done = false
  try {
    for (;;) {
      control.check()
      const step = await control.race(pages.next())
      if (step.done === true) break
      for (const entry of step.value) entries.push(entry)
    }
    done = true
  } finally {
    if (!done) void Promise.resolve(pages.return?.()).catch(() => undefined)
  }
  return entries
}
