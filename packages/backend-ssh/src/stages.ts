import { posix } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after, hunt, look, probe, settlePlace } from './checks.js'
import type { ServerClock } from './clock.js'
import type { Attrs, Session } from './connection.js'
import { statusOf } from './errors.js'
import { release, tempName } from './names.js'
import { kindOf } from './paths.js'
import type { StageKeeper, Sweeper } from './sweep.js'

/** Who makes a stage for what, for the checks and their errors. */
export interface StageSite {
  readonly root: string
  readonly verb: FsVerb
  readonly path: string
  /** Takes over a stage that could not be removed (the next operation's sweep removes it). */
  readonly orphan: (stage: string) => void
  /** Keeps stages fresh while they are in use (a sweep by another writer never takes a live one). */
  readonly keeper: StageKeeper
  /** Bounded by the mtime of each stage made. */
  readonly clock: ServerClock
  /** Removes what dead writers left (stages, lock entries) in the directories an operation empties. */
  readonly sweeper: Sweeper
}

/**
 * A private, empty directory with a random name (a temp name: listings hide
 * it) made in `dir` and checked to be there. It exists only where it was made,
 * so a path `stage/../<name>` reaches `dir/<name>` or nothing: a directory on
 * the way swapped for a link meanwhile makes the request fail instead of
 * leading it out of the root. Removals and moves name their entries this way
 * (the write path's staging directory, without a temp file).
 */
export interface Stage {
  readonly dir: string
  readonly path: string
  /** Ends the keeping fresh of the stage (see `StageKeeper`). */
  readonly unkeep: () => void
}

const isDirectory = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'directory'

/** `dir/<name>`, named through the stage. */
export function through(stage: Stage, name: string): string {
  return `${stage.path}/../${name}`
}

/**
 * Sends the MKDIR of a stage in `dir` and the probes that check it (one round
 * trip, none extra when nothing is swapped; more only to settle an ambiguous
 * sighting). Rejects with the server's error when the MKDIR failed (a missing
 * `dir`), and with `FS_SANDBOX_DENIED` when the stage was made outside the
 * root (it is removed again, wherever a probe saw it).
 */
export async function makeStage(s: Session, site: StageSite, dir: string): Promise<Stage> {
  const name = tempName()
  const path = `${dir}/${name}`
  try {
    return await stageAt(s, site, dir, path)
  } catch (err) {
    release(name)
    throw err
  }
}

async function stageAt(s: Session, site: StageSite, dir: string, path: string): Promise<Stage> {
  const where = `${path}/.`
  const sent = Date.now()
  const before = look(s, path)
  const made = s.mkdir(path, { mode: 0o700 })
  const sighting = probe(s, where, path, 'lstat')
  const burst = Promise.all([before, sighting])
  burst.catch(() => undefined)
  await made.catch((err: unknown) => {
    // The connection dropped: the stage may exist all the same; the sweep removes it over the next one.
    if (statusOf(err) === undefined) site.orphan(path)
    throw err
  })
  const [b, seen] = await burst
  const settled = await settlePlace(s, site.root, { where, expected: path, file: path }, after([b], seen), isDirectory)
  if (settled.verdict === 'yes') {
    const made = seen.attrs.findLast((a) => a !== undefined)?.mtime
    if (made !== undefined) site.clock.observe(made, sent, Date.now())
    return { dir, path, unkeep: site.keeper.keep(s, path) }
  }
  // Hunted down by its own path too: a swap that no probe caught may have led the MKDIR out (its
  // name is random: whatever answers to it is this operation's).
  const removed = await hunt([path, ...settled.outside], (p) => s.rmdir(p), { s, root: site.root, dir })
  if (!removed) site.orphan(path)
  if (settled.outside.length === 0) {
    // Made, and not found where it was made, with no path seen leading out: most likely another
    // process moved or removed it (or its directory). Not reported as a swap.
    const reason = 'the staging directory this operation made was moved or removed by another process at once; nothing was changed, try again'
    throw FsError.io(site.verb, site.path, reason, { retryable: true })
  }
  const left = removed ? 'removed' : 'left (empty) where this client could not find it'
  const reason = `a directory on the path was swapped for a link while a staging directory was made (it was ${left}); nothing was changed`
  throw FsError.sandboxDenied(site.verb, site.path, reason)
}

/** Removes a stage (sent now; the next request on the session is answered after it); one that cannot be removed is swept later. */
export function dropStage(s: Session, site: StageSite, stage: Stage): Promise<void> {
  stage.unkeep()
  return s
    .rmdir(stage.path)
    .catch(() => site.orphan(stage.path))
    .finally(() => release(posix.basename(stage.path)))
}

/** A stage, or the error of its MKDIR (awaited later, once the caller knows whether it needs the stage). */
export function stageOrError(s: Session, site: StageSite, dir: string): Promise<Stage | { readonly error: unknown }> {
  return makeStage(s, site, dir).catch((error: unknown) => ({ error }))
}

/** The stage of an outcome of `stageOrError`, or its error thrown. */
export function stageOf(outcome: Stage | { readonly error: unknown }): Stage {
  if ('error' in outcome) throw outcome.error
  return outcome
}

/** The name of `key` in its directory. */
export function nameOf(key: string): string {
  return posix.basename(key)
}
