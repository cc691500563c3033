import { posix } from 'node:path'
import { staleReason } from '@seamfs/core/backend'
import { look } from './checks.js'
import { sightClock, type ServerClock } from './clock.js'
import type { Session } from './connection.js'
import type { SftpLeaseStore } from './leases.js'
import { isLockName, isOldTempName, isReservedName, isTempName, KEEP_NAME, ownerState } from './names.js'
import { kindOf } from './paths.js'
import { entriesOf, type Reserved } from './entries.js'

/**
 * Stages and lock entries left by writers that died (stages.ts, publish.ts, leases.ts), found and
 * removed by the writers that come after them. Rules:
 * - only names of the reserved patterns (names.ts) are ever removed, and only regular files and
 *   directories: a link or anything else at such a name is left alone, never followed;
 * - a stage is abandoned when its owner is provably gone (a dead process on this machine, or this
 *   process no longer using it: no wait), or, for a stage of another machine, a live pid or an
 *   older name, when its mtime did not move for {@link STAGE_LEASE_MS} by the server's clock ({@link OLD_STAGE_AGE_MS} for older names, whose writers do not keep theirs
 *   fresh); live stages are kept fresh by their {@link StageKeeper};
 * - a lock entry is removed only when core's `staleReason` says so, and only if it is still the
 *   entry judged (leases.ts).
 */

/** A stage untouched this long (by the server's clock) is abandoned; its keeper marks a live one fresh every third of it. */
export const STAGE_LEASE_MS = 30_000
/** The age after which a stage of an older version (no owner in its name, never kept fresh) is abandoned. */
export const OLD_STAGE_AGE_MS = 60_000
/** A directory is swept in the background at most this often by one filesystem. */
export const SWEEP_EVERY_MS = 30_000
/** Directories remembered as swept (the oldest are forgotten past this). */
const REMEMBERED = 1_000

/**
 * Keeps this filesystem's live stages fresh: one whose operation runs longer than a third of
 * {@link STAGE_LEASE_MS} gets an entry made and removed in it (MKDIR + RMDIR, sent together: the
 * server sets the stage's mtime by its own clock), so no sweep takes it for abandoned.
 */
export class StageKeeper {
  readonly #stages = new Map<string, { s: Session; since: number }>()
  #timer: ReturnType<typeof setInterval> | undefined

  /** Keeps `path` fresh until the returned function is called. */
  keep(s: Session, path: string): () => void {
    this.#stages.set(path, { s, since: Date.now() })
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), STAGE_LEASE_MS / 3)
      this.#timer.unref()
    }
    return () => {
      this.#stages.delete(path)
      if (this.#stages.size === 0) this.close()
    }
  }

  close(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  #tick(): void {
    const now = Date.now()
    for (const [path, stage] of this.#stages) {
      if (now - stage.since < STAGE_LEASE_MS / 3 || stage.s.dead) continue
      stage.since = now
      const keep = `${path}/${KEEP_NAME}`
      stage.s.mkdir(keep, { mode: 0o700 }).catch(() => undefined)
      stage.s.rmdir(keep).catch(() => undefined)
    }
  }
}

/** What a sweep needs of its filesystem. */
export interface SweepSite {
  session(): Promise<Session>
  root(): string
  readonly clock: ServerClock
  readonly leases: SftpLeaseStore
  /** False: no background sweep (`sweepAbandoned: false`); removals of a directory still clear what blocks them. */
  readonly background: boolean
}

/** Finds and removes what dead writers left in directories (see the module's rules). */
export class Sweeper {
  readonly #site: SweepSite
  readonly #last = new Map<string, number>()
  #closed = false

  constructor(site: SweepSite) {
    this.#site = site
  }

  /** Sweeps `dir` in the background, after the current operation, unless it was swept within {@link SWEEP_EVERY_MS}. */
  touch(dir: string): void {
    if (!this.#site.background || this.#closed) return
    const now = Date.now()
    const last = this.#last.get(dir)
    if (last !== undefined && now - last < SWEEP_EVERY_MS) return
    this.#last.delete(dir)
    this.#last.set(dir, now)
    if (this.#last.size > REMEMBERED) this.#last.delete(this.#last.keys().next().value as string)
    setTimeout(() => {
      if (this.#closed) return
      this.#site
        .session()
        .then((s) => this.sweep(s, dir))
        .catch(() => undefined)
    }, 0)
  }

  close(): void {
    this.#closed = true
  }

  /** Lists `dir` and removes what is abandoned in it; the reserved names still there (undefined: the listing was not trusted). */
  async sweep(s: Session, dir: string): Promise<string[] | undefined> {
    const listed = await entriesIn(s, dir)
    if (listed === undefined) return undefined
    const reserved = listed.filter((e) => isReservedName(e.name))
    const removed = await this.clear(s, reserved, (name) => posix.join(dir, name))
    return reserved.map((e) => e.name).filter((name) => !removed.has(name))
  }

  /** Removes, of the reserved entries of one directory, those whose owner is gone, each named `via(name)`; the names removed. */
  async clear(s: Session, entries: readonly Reserved[], via: (name: string) => string): Promise<Set<string>> {
    const removed = new Set<string>()
    const stages = entries.filter((e) => isTempName(e.name) && ['file', 'directory'].includes(kindOf(e.attrs.mode)))
    const locks = entries.filter((e) => isLockName(e.name) && kindOf(e.attrs.mode) === 'file')
    if (stages.length === 0 && locks.length === 0) return removed
    const clock = this.#site.clock
    const judged = stages.filter((e) => ownerState(e.name) === 'unknown')
    if (judged.length > 0 && !clock.known) await sightClock(s, this.#site.root(), clock)
    // A live stage is kept fresh by its keeper (its own mtime, set by the server), however long its write runs.
    const gone = stages.filter((e) => {
      const owner = ownerState(e.name)
      if (owner !== 'unknown') return owner === 'gone'
      return clock.olderThan(e.attrs.mtime, isOldTempName(e.name) ? OLD_STAGE_AGE_MS : STAGE_LEASE_MS)
    })
    await Promise.all(
      gone.map(async (e) => {
        const at = via(e.name)
        try {
          if (kindOf(e.attrs.mode) === 'directory') {
            await Promise.all([s.unlink(`${at}/${e.name}`).catch(() => undefined), s.rmdir(`${at}/${KEEP_NAME}`).catch(() => undefined), s.rmdir(at)])
          } else await s.unlink(at)
          removed.add(e.name)
        } catch {
          // Left for a later sweep.
        }
      }),
    )
    for (const e of locks) {
      const at = via(e.name)
      if (this.#site.leases.holds(posix.normalize(at))) continue
      const entry = await this.#site.leases.entryAt(s, at, e.attrs).catch(() => undefined)
      if (entry?.text === undefined || staleReason(entry) === undefined) continue
      if (await this.#site.leases.removeIfSame(s, at, entry.token).catch(() => false)) removed.add(e.name)
    }
    return removed
  }
}

/**
 * Every entry of `dir` with its attrs (one OPENDIR, READDIRs to the end), its realpath looked at
 * before and after: undefined when the path led anywhere else meanwhile (a directory swapped for a
 * link: nothing is removed by that listing).
 */
export async function entriesIn(s: Session, dir: string): Promise<Reserved[] | undefined> {
  const before = look(s, dir)
  const entries = await entriesOf(s, dir)
  const after = await look(s, dir)
  if ((await before) !== dir || after !== dir) return undefined
  return entries
}
