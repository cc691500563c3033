import { posix } from 'node:path'
import { FsError, throwIfAborted, type RemoveRequest } from '@seamfs/core/backend'
import { after, look, outsideSeen, probe, SETTLE_ROUNDS, type Sighting } from './checks.js'
import { readdirChecked } from './checked-reads.js'
import type { Attrs, Session } from './connection.js'
import { STATUS, statusOf } from './errors.js'
import { childPath, kindOf, type Kind } from './paths.js'
import { isReservedName } from './names.js'
import { dropStage, makeStage, nameOf, through, type Stage, type StageSite } from './stages.js'
import { entriesOf, type Reserved } from './entries.js'

/** Directories listed at once while a tree is counted, and removed at once while it is taken down. */
const DIRECTORY_CONCURRENCY = 8
/** Unlinks of one directory sent at once (one round trip each batch). */
const UNLINK_BATCH = 64
/** Attempts at a directory's rmdir while what keeps it is other clients' stages (live ones go within moments). */
const RMDIR_ATTEMPTS = 5
/** The wait before another attempt: this much, plus as much again at random (removers racing for one directory fall out of step). */
const RMDIR_WAIT_MS = 25

/** Who removes or moves what, for the checks and their errors. */
export type TreeSite = StageSite

/** A directory to remove, as counted: its subdirectories, its other entries (never followed), and other writers' stages and lock entries in it (not counted). */
export interface Tree {
  readonly key: string
  readonly directories: Tree[]
  readonly leaves: string[]
  readonly stages: Reserved[]
}

/** A sighting, or undefined when a probe could not be sent or answered (a dropped connection fails the request too). */
async function sighted(before: Promise<string | undefined>, burst: Promise<Sighting>): Promise<Sighting | undefined> {
  try {
    return after([await before], await burst)
  } catch {
    return undefined
  }
}

function swapped(site: TreeSite, outside: string, what: string): FsError {
  return FsError.sandboxDenied(site.verb, site.path, `a directory on the path was moved out of the root (it is at ${JSON.stringify(outside)} now); ${what}`)
}

/** The realpath of a stage, probed around a request: where its directory is while the request ran. */
const whereOf = (stage: Stage): string => `${stage.path}/.`

/**
 * Unlinks (or, for a directory, rmdirs) `key`, named through a stage in its
 * directory (stages.ts: a swapped directory on the way makes the request fail,
 * it cannot lead it out of the root), with `realpath` of the stage probed
 * right before and right after (same round trip). A NO_SUCH_FILE while the
 * probes did not see the stage in place (a swap) is tried again, up to
 * SETTLE_ROUNDS times. When the probes saw the directory itself outside the
 * root (moved there, with the stage), the error says what may have been
 * removed there. Throws the server's error when the removal failed.
 */
export async function removeEntry(s: Session, site: TreeSite, key: string, kind: Kind, stage: Stage): Promise<void> {
  const via = through(stage, nameOf(key))
  for (let round = 0; ; round++) {
    const before = look(s, whereOf(stage))
    const removed = kind === 'directory' ? s.rmdir(via) : s.unlink(via)
    const seen = sighted(before, probe(s, whereOf(stage), key, 'lstat'))
    const [result, sighting] = await Promise.all([
      removed.then(
        () => undefined,
        (err: unknown) => ({ err }),
      ),
      seen,
    ])
    const out = sighting === undefined ? undefined : outsideSeen(site.root, sighting)
    if (out !== undefined) {
      const what = result === undefined ? `"${childPath(posix.dirname(out), nameOf(key))}" outside the root may have been removed` : 'nothing was removed'
      throw swapped(site, out, what)
    }
    if (result === undefined) return
    const inPlace = sighting !== undefined && sighting.reals.every((real) => real === stage.path)
    if (statusOf(result.err) !== STATUS.NO_SUCH_FILE || inPlace) throw result.err
    if (round >= SETTLE_ROUNDS) {
      const reason = 'a directory on the path kept being swapped for a link; nothing was removed, try again'
      throw FsError.io(site.verb, site.path, reason, { retryable: true, cause: result.err })
    }
  }
}

/** The stages a move names its ends through (one stage when both are in one directory). */
export interface MoveStages {
  readonly from: Stage
  readonly to: Stage
}

/** A move of one entry: the keys of its ends, how it is made, and the stages it names them through. */
export interface EntryMove {
  readonly from: string
  readonly to: string
  /** `posix-rename@openssh.com`, which replaces a file at `to`; else OpenSSH's plain rename, which never replaces. */
  readonly replace: boolean
  readonly stages: MoveStages
}

/**
 * Moves `from` to `to`, both named through stages (stages.ts),
 * with the stages probed around the request (same round trip). When a probe
 * saw either directory outside the root (moved there, with its stage):
 * `FS_SANDBOX_DENIED`, saying what may have happened. Returns the attrs `to`
 * showed right after the move.
 */
export async function moveEntry(s: Session, site: TreeSite, { from, to, replace, stages }: EntryMove): Promise<Attrs | undefined> {
  const [source, destination] = [through(stages.from, nameOf(from)), through(stages.to, nameOf(to))]
  const beforeFrom = look(s, whereOf(stages.from))
  const beforeTo = look(s, whereOf(stages.to))
  const moved = replace ? s.rename(source, destination) : s.renameNoReplace(source, destination)
  const seenTo = sighted(beforeTo, probe(s, whereOf(stages.to), to, 'lstat'))
  const seenFrom = sighted(beforeFrom, probe(s, whereOf(stages.from), from, 'lstat'))
  const [result, toSide, fromSide] = await Promise.all([
    moved.then(
      () => undefined,
      (err: unknown) => ({ err }),
    ),
    seenTo,
    seenFrom,
  ])
  const outTo = toSide === undefined ? undefined : outsideSeen(site.root, toSide)
  const outFrom = fromSide === undefined ? undefined : outsideSeen(site.root, fromSide)
  if (outTo !== undefined) throw swapped(site, outTo, result === undefined ? 'the entry may have left the root with it' : 'nothing was moved')
  if (outFrom !== undefined) throw swapped(site, outFrom, result === undefined ? 'the entry moved may have come from outside the root' : 'nothing was moved')
  if (result !== undefined) throw result.err
  return toSide?.attrs.findLast((a) => a !== undefined)
}

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first failure (after the running ones settle). */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  let failure: { err: unknown } | undefined
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T
      await fn(item).catch((err: unknown) => {
        failure ??= { err }
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  if (failure !== undefined) throw failure.err
}

/**
 * Lists the tree below the directory `key` (attrs of `lstat`: links are
 * leaves, never followed), each directory with the checked listing of reads
 * (checked-reads.ts). Reserved names (stages and lock entries: other writers',
 * live or abandoned) are noted, never counted nor entered; a subdirectory
 * another client removed meanwhile is skipped. Counts `key` itself and every entry below it; past
 * the request's `maxEntries` it stops and throws `FS_TOO_LARGE` with `{ entries, limit }`
 * (`entries`: how many it had counted then, at least `limit + 1`).
 */
export async function surveyTree(
  s: Session,
  site: TreeSite,
  key: string,
  { maxEntries: limit, signal }: Pick<RemoveRequest, 'maxEntries' | 'signal'>,
): Promise<{ tree: Tree; entries: number }> {
  const tree: Tree = { key, directories: [], leaves: [], stages: [] }
  let entries = 1
  let level: Tree[] = [tree]
  while (level.length > 0) {
    const next: Tree[] = []
    await eachLimited(level, DIRECTORY_CONCURRENCY, async (dir) => {
      throwIfAborted(signal, site.verb)
      const all = await readdirChecked(s, { root: site.root, key: dir.key, verb: site.verb, path: site.path }, Promise.resolve()).catch((err: unknown) => {
        if (dir !== tree && statusOf(err) === STATUS.NO_SUCH_FILE) return []
        throw err
      })
      for (const e of all) if (isReservedName(e.filename)) dir.stages.push({ name: e.filename, attrs: e.attrs })
      const listing = all.filter((e) => !isReservedName(e.filename))
      entries += listing.length
      if (entries > limit) throw FsError.tooManyEntries(site.verb, site.path, entries, limit)
      for (const e of listing) {
        const child = childPath(dir.key, e.filename)
        if (kindOf(e.attrs.mode) === 'directory') {
          const sub: Tree = { key: child, directories: [], leaves: [], stages: [] }
          dir.directories.push(sub)
          next.push(sub)
        } else dir.leaves.push(child)
      }
    })
    level = next
  }
  return { tree, entries }
}

/**
 * Removes a counted tree depth-first: a stage in the directory (stages.ts),
 * its subtrees, then its other entries through the stage (in batches, with
 * the stage probed around each: a directory moved out of the root stops the
 * removal with `FS_SANDBOX_DENIED`), what dead writers left there (the
 * sweep's rules, sweep.ts: never a live writer's), its own stage, and then
 * the directory itself through `parent`, its parent's stage (`removeEntry`).
 * Entries and subdirectories someone else removed meanwhile are skipped. An
 * rmdir kept by other clients' stages alone is tried again (RMDIR_ATTEMPTS);
 * one kept by entries added meanwhile (or by a swap), or by stages that stay,
 * is a retryable `FS_NOT_EMPTY`. The tree's own directory gone meanwhile
 * (another remover finished it) throws the server's NO_SUCH_FILE, for the
 * caller to report. Returns how many entries it removed.
 */
export function removeTree(s: Session, site: TreeSite, tree: Tree, parent: Stage): Promise<number> {
  return takeDown(s, site, tree, { parent, top: true })
}

/** Where a directory of a counted tree is removed: through `parent`, its parent's stage; `top`: it is the tree's own directory (gone meanwhile, it is an error, not another remover's work). */
interface Under {
  readonly parent: Stage
  readonly top: boolean
}

async function takeDown(s: Session, site: TreeSite, tree: Tree, under: Under): Promise<number> {
  const { top } = under
  const stage = await makeStage(s, site, tree.key).catch((err: unknown) => {
    if (!top && statusOf(err) === STATUS.NO_SUCH_FILE) return undefined
    throw err
  })
  // Another remover took this subdirectory down already.
  if (stage === undefined) return 0
  let removed = 0
  try {
    await eachLimited(tree.directories, DIRECTORY_CONCURRENCY, async (sub) => {
      removed += await takeDown(s, site, sub, { parent: stage, top: false })
    })
    for (let i = 0; i < tree.leaves.length; i += UNLINK_BATCH) removed += await unlinkBatch(s, site, stage, tree.leaves.slice(i, i + UNLINK_BATCH))
    await site.sweeper.clear(s, tree.stages, (name) => through(stage, name))
  } finally {
    await dropStage(s, site, stage)
  }
  return removed + (await removeDirectory(s, site, tree.key, { ...under, removed }))
}

/**
 * The rmdir of a directory whose entries were removed (see `removeTree`; `removed`: how many, for
 * the error): 1 when it removed it, 0 when another client did (a subtree; the top's NO_SUCH_FILE
 * is thrown).
 */
async function removeDirectory(s: Session, site: TreeSite, key: string, { parent, top, removed }: Under & { readonly removed: number }): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      await removeEntry(s, site, key, 'directory', parent)
      return 1
    } catch (err) {
      if (statusOf(err) === STATUS.NO_SUCH_FILE && !top) return 0
      // OpenSSH folds ENOTEMPTY into a generic FAILURE: a READDIR tells.
      if (statusOf(err) !== STATUS.FAILURE) throw err
      const left = await entriesOf(s, key).catch((e: unknown) => (statusOf(e) === STATUS.NO_SUCH_FILE ? [] : undefined))
      if (left === undefined) throw err
      const entries = left.filter((e) => !isReservedName(e.name))
      if (entries.length === 0 && left.length > 0 && attempt === 1) {
        // What dead writers left (a stage, a lock entry) never blocks the removal.
        await site.sweeper.clear(s, left, (name) => `${through(parent, nameOf(key))}/${name}`)
        continue
      }
      if (entries.length === 0 && attempt < RMDIR_ATTEMPTS) {
        await delay(RMDIR_WAIT_MS * (1 + Math.random()))
        continue
      }
      if (entries.length === 0 && left.length === 0) throw err
      const why =
        entries.length > 0
          ? 'still has entries (another client wrote there)'
          : "still holds another writer's staging directory or lock entry (a write in progress there)"
      const reason = `"${key}" ${why}: ${removed} entries were removed; try again`
      throw FsError.at('FS_NOT_EMPTY', site.verb, site.path, reason, { retryable: true, cause: err })
    }
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Unlinks entries of the stage's directory through it, in one round trip; how many it removed. */
async function unlinkBatch(s: Session, site: TreeSite, stage: Stage, leaves: readonly string[]): Promise<number> {
  const before = look(s, whereOf(stage))
  const batch = leaves.map((leaf) =>
    s.unlink(through(stage, nameOf(leaf))).then(
      () => true,
      (err: unknown) => {
        if (statusOf(err) === STATUS.NO_SUCH_FILE) return false
        throw err
      },
    ),
  )
  const seen = sighted(before, probe(s, whereOf(stage), stage.path, 'lstat'))
  const [done, sighting] = await Promise.all([Promise.allSettled(batch), seen])
  const out = sighting === undefined ? undefined : outsideSeen(site.root, sighting)
  if (out !== undefined) throw swapped(site, out, `entries of "${posix.dirname(out)}" outside the root may have been removed`)
  let removed = 0
  for (const d of done) {
    if (d.status === 'rejected') throw d.reason
    if (d.value) removed++
  }
  return removed
}
