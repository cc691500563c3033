/** `listTree`: the default directory walk behind its hook, and the pages the public method hands out. */
import { abortableChunks } from './abort-wait.js'
import { FsError, throwIfAborted, type FsErrorCode } from './errors.js'
import type { Awaitable, TreePages, TreeRequest } from './hooks.js'
import { sortByName } from './order.js'
import { translateError, type ErrorRow } from './translate.js'
import type { FsDirEntry, FsPathInfo, FsTarget, FsTargetKey, FsTreeEntry } from './types.js'

/** Directories the default walk lists at once, and directory entries it checks for links at once. */
export const WALK_CONCURRENCY = 8

/** Failures of a directory below the root that mean it is gone: it is left out. */
const GONE: ReadonlySet<FsErrorCode> = new Set(['FS_NOT_FOUND', 'FS_NOT_DIRECTORY'])

/** What the default walk lists with: a filesystem's own hooks. */
export interface WalkHooks {
  listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]>
  lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined>
  errorRow(err: unknown): ErrorRow | undefined
}

interface Dir {
  readonly target: FsTarget
  /** Below the root, `/`-joined (`''`: the root). */
  readonly path: string
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown }

/** `fn` over `items`, at most `limit` at a time; every outcome, in input order. */
async function settledInOrder<T, R>(items: readonly T[], limit: number, fn: (item: T) => Awaitable<R>): Promise<Settled<R>[]> {
  const out = new Array<Settled<R>>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++
      try {
        out[at] = { ok: true, value: await fn(items[at] as T) }
      } catch (error) {
        out[at] = { ok: false, error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

/** A name a listing may hand on: not empty, `.`, `..`, and no `/` (a broken backend's `.` would send the walk round in circles). */
const isEntryName = (name: string): boolean => name !== '' && name !== '.' && name !== '..' && !name.includes('/')

const childPath = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`)

/**
 * The default of `listSubtree`: breadth-first through `listEntries`, up to {@link WALK_CONCURRENCY}
 * directories at a time, a page per such batch (the next batch is listed only once the caller asks
 * for more: a caller that stops at a bound stops the walk within a batch). Each directory entry not pruned is looked at with
 * `lstatPath` (a link is listed with `link: true`, never entered); each directory is entered once
 * (by `targetKey`). The root's listing happens before this returns, so its failures reject; a
 * directory below that is gone when its turn comes (or no longer a directory) is left out, any
 * other failure is thrown by the iterator, naming that directory.
 */
export async function walkTree(root: FsTarget, request: TreeRequest, hooks: WalkHooks): Promise<TreePages> {
  const first = await hooks.listEntries(root, request.signal)
  return levels(root, first, request, hooks)
}

async function* levels(root: FsTarget, first: FsDirEntry[], request: TreeRequest, hooks: WalkHooks): AsyncGenerator<FsTreeEntry[]> {
  const { signal, prune } = request
  const fail = (err: unknown, path: string): FsError => translateError(err, 'list', path, (e) => hooks.errorRow(e))
  const seen = new Set<FsTargetKey>([root.targetKey])
  let listed: { dir: Dir; entries: Settled<FsDirEntry[]> }[] = [{ dir: { target: root, path: '' }, entries: { ok: true, value: first } }]
  // Directories still to list, breadth-first: listed WALK_CONCURRENCY at a time, each batch's page
  // handed out before the next batch is listed, so a caller that stops (a bound reached) stops the walk.
  const queue: Dir[] = []
  while (listed.length > 0) {
    const page: FsTreeEntry[] = []
    const candidates: { dir: Dir; at: number; lstat: string }[] = []
    for (const { dir, entries } of listed) {
      if (!entries.ok) {
        const error = fail(entries.error, dir.target.displayPath)
        if (GONE.has(error.code)) continue
        throw error
      }
      const parent = dir.target.displayPath.replace(/\/+$/, '')
      for (const entry of sortByName(entries.value)) {
        if (!isEntryName(entry.name)) continue
        const path = childPath(dir.path, entry.name)
        if (entry.type === 'directory' && !prune.has(entry.name))
          candidates.push({ dir: { target: entry.target, path }, at: page.length, lstat: `${parent}/${entry.name}` })
        page.push({ ...entry, path })
      }
    }
    throwIfAborted(signal, 'list')
    const kinds = await settledInOrder(candidates, WALK_CONCURRENCY, (c) => hooks.lstatPath(c.lstat, undefined, signal))
    candidates.forEach((candidate, i) => {
      const kind = kinds[i] as Settled<FsPathInfo | undefined>
      if (!kind.ok) {
        const error = fail(kind.error, candidate.lstat)
        if (error.code !== 'FS_NOT_FOUND') throw error
        return
      }
      if (kind.value?.type === 'symlink') page[candidate.at] = { ...(page[candidate.at] as FsTreeEntry), link: true }
      if (kind.value?.type !== 'directory' || seen.has(candidate.dir.target.targetKey)) return
      seen.add(candidate.dir.target.targetKey)
      queue.push(candidate.dir)
    })
    if (page.length > 0) yield page
    throwIfAborted(signal, 'list')
    const next = queue.splice(0, WALK_CONCURRENCY)
    const lists = await settledInOrder(next, WALK_CONCURRENCY, (dir) => hooks.listEntries(dir.target, signal))
    listed = next.map((dir, i) => ({ dir, entries: lists[i] as Settled<FsDirEntry[]> }))
  }
}

/** `prune` as the hook gets it; anything but an array of strings is `FS_UNSUPPORTED`. */
export function pruneSet(prune: unknown, path: string): ReadonlySet<string> {
  if (prune === undefined) return new Set()
  if (!Array.isArray(prune) || !prune.every((name) => typeof name === 'string')) throw FsError.unsupported('list', path, 'prune must be an array of names')
  return new Set<string>(prune)
}

/** `listTree`'s pages: each waited for no longer than the signal allows, the signal checked before each, failures translated. */
export async function* treePages(
  source: TreePages,
  path: string,
  signal: AbortSignal | undefined,
  translate: (err: unknown) => FsError,
): AsyncGenerator<FsTreeEntry[]> {
  try {
    for await (const page of abortableChunks(source, signal, 'list')) {
      throwIfAborted(signal, 'list', path)
      yield page
    }
  } catch (err) {
    throw translate(err)
  }
}

/** `pages` with `map` applied to every entry (a layer's view of another filesystem's listing). */
export async function* mapPages(pages: TreePages, map: (entry: FsTreeEntry) => FsTreeEntry): AsyncGenerator<FsTreeEntry[]> {
  for await (const page of pages) yield page.map(map)
}
