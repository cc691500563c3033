import { posix } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after, hunt, look, probe, settlePlace } from './checks.js'
import type { Attrs, Session } from './connection.js'
import { statusOf } from './errors.js'
import { kindOf } from './paths.js'
import { tempName } from './publish.js'

/** Who makes a stage for what, for the checks and their errors. */
export interface StageSite {
  readonly root: string
  readonly verb: FsVerb
  readonly path: string
  /** Takes over a stage that could not be removed (the next operation's sweep removes it). */
  readonly orphan: (stage: string) => void
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
  /** The stage's mtime as the server set it (seconds): the server's clock when the stage was made. */
  readonly made?: number | undefined
}

/** Another client's stage older than this (by the server's clock) is abandoned: a crashed writer's or remover's, never a live one. */
export const ABANDONED_AFTER_SECONDS = 60

/** True when a stage with mtime `mtime` is abandoned, judged by a stage of this client made in the same directory. */
export function abandoned(mtime: number, mine: Stage): boolean {
  return mine.made !== undefined && mtime + ABANDONED_AFTER_SECONDS <= mine.made
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
  const path = `${dir}/${tempName()}`
  const where = `${path}/.`
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
  if (settled.verdict === 'yes') return { dir, path, made: seen.attrs.findLast((a) => a !== undefined)?.mtime }
  const removed = await hunt([path, ...settled.outside], (p) => s.rmdir(p))
  if (!removed) site.orphan(path)
  const left = removed ? 'removed' : 'left (empty) where this client could not find it'
  const reason = `a directory on the path was swapped for a link while a staging directory was made (it was ${left}); nothing was changed`
  throw FsError.at('FS_SANDBOX_DENIED', site.verb, site.path, reason)
}

/** Removes a stage (sent now; the next request on the session is answered after it); one that cannot be removed is swept later. */
export function dropStage(s: Session, site: StageSite, stage: Stage): Promise<void> {
  return s.rmdir(stage.path).catch(() => site.orphan(stage.path))
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
