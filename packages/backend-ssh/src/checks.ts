import { posix } from 'node:path'
import type { Attrs, Session } from './connection.js'
import { statusOf } from './errors.js'
import { containsPath } from './paths.js'

/**
 * SFTP has no descriptor-relative operations and its attrs carry no inode: a
 * request names a path, and the server walks it again, so a directory on it
 * swapped for a symlink between two requests sends the second one elsewhere.
 * What a client can do is look again, right around each request that matters,
 * in the same round trip: a burst of `realpath` (where the path leads now)
 * mixed with `stat` / `lstat` (what is there now). A request that went astray
 * is caught unless the path flipped back and forth in step with every probe of
 * the burst, within the microseconds the server takes to answer them.
 */

/**
 * The order of a burst's probes after the request it checks: `r` a realpath, `a` a stat or lstat.
 * Irregular on purpose: a swapper that flips at a steady pace in step with the server's answers
 * can fool a strictly alternating burst, not this one.
 */
const PATTERN = 'rarraar'
/** Extra bursts a publication may spend to settle an ambiguous sighting before it counts as a violation. */
export const SETTLE_ROUNDS = 8

/** What one burst saw of a path: its realpaths and its attrs, in the order the server answered. */
export interface Sighting {
  /** `realpath` of the probed directory or file; undefined where it did not exist. */
  readonly reals: readonly (string | undefined)[]
  /** Attrs of the probed file; undefined where it did not exist. */
  readonly attrs: readonly (Attrs | undefined)[]
}

/**
 * The answer of a probe: undefined when the server answered with a status
 * (absent, refused, or `realpath` meeting a link that changed under it);
 * anything else (a dropped connection) is thrown.
 */
export async function settle<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request
  } catch (err) {
    if (statusOf(err) === undefined) throw err
    return undefined
  }
}

/** `realpath(where)` as a probe; send it right before the request it brackets. */
export function look(s: Session, where: string): Promise<string | undefined> {
  const real = settle(s.realpath(where))
  real.catch(() => undefined)
  return real
}

/** A sighting with realpaths taken before it (right before the request it checks). */
export function after(before: readonly (string | undefined)[], sighting: Sighting): Sighting {
  return { reals: [...before, ...sighting.reals], attrs: sighting.attrs }
}

/**
 * Sends, without waiting for anything, a burst of `realpath(where)` and
 * `stat`/`lstat`(file) in the order of PATTERN. Call it right after the
 * request it checks, so the burst goes out in the same round trip.
 */
export function probe(s: Session, where: string, file: string, how: 'stat' | 'lstat'): Promise<Sighting> {
  const reals: Promise<string | undefined>[] = []
  const attrs: Promise<Attrs | undefined>[] = []
  for (const kind of PATTERN) {
    if (kind === 'r') reals.push(settle(s.realpath(where)))
    else attrs.push(settle(how === 'stat' ? s.stat(file) : s.lstat(file)))
  }
  return Promise.all([Promise.all(reals), Promise.all(attrs)]).then(([r, a]) => ({ reals: r, attrs: a }))
}

/** True when two attrs describe one file as SFTP v3 can tell: size, mtime, permissions and owner (atime moves on reads). */
export function sameFile(a: Attrs, b: Attrs): boolean {
  return a.size === b.size && a.mtime === b.mtime && a.mode === b.mode && a.uid === b.uid && a.gid === b.gid
}

/** The first realpath of a sighting that lies outside `root`, if any. */
export function outsideSeen(root: string, sighting: Sighting): string | undefined {
  return sighting.reals.find((real) => real !== undefined && !containsPath(root, real))
}

/**
 * Whether a handle opened by path is the file at that path inside the root:
 * `outside` when a realpath led out, `inside` when every realpath stayed in and
 * every stat saw the handle's file, `unsure` otherwise (the file was replaced
 * or changed meanwhile, legitimately or not: the caller opens again).
 */
export function handleVerdict(root: string, sighting: Sighting, opened: Attrs): 'inside' | 'outside' | 'unsure' {
  if (outsideSeen(root, sighting) !== undefined) return 'outside'
  if (sighting.reals.some((real) => real === undefined)) return 'unsure'
  return sighting.attrs.every((a) => a !== undefined && sameFile(a, opened)) ? 'inside' : 'unsure'
}

/**
 * Whether `mine` holds of the file at `dir/<name>` with `dir` where it should
 * be: `yes` / `no` when every realpath of the burst was exactly `dir` and
 * every lstat agreed, `unsure` when the directory moved during the burst or
 * the lstats disagree (look again).
 */
export function placeVerdict(dir: string, sighting: Sighting, mine: (attrs: Attrs | undefined) => boolean): 'yes' | 'no' | 'unsure' {
  if (!sighting.reals.every((real) => real === dir)) return 'unsure'
  const seen = sighting.attrs.map(mine)
  if (seen.every(Boolean)) return 'yes'
  return seen.some(Boolean) ? 'unsure' : 'no'
}

/** What a burst loop probes: `realpath(where)` should be `expected`; `file` is lstat-ed. */
export interface Place {
  readonly where: string
  readonly expected: string
  readonly file: string
}

/** The result of a burst loop: the verdict it settled on and every outside place it saw on the way. */
export interface Settled {
  readonly verdict: 'yes' | 'no' | 'unsure'
  readonly outside: readonly string[]
}

/**
 * Looks again (one more burst per round trip, at most SETTLE_ROUNDS) until a
 * burst sees the place's directory where it should be throughout and agrees on `mine`.
 */
export async function settlePlace(s: Session, root: string, at: Place, first: Sighting, mine: (a: Attrs | undefined) => boolean): Promise<Settled> {
  const outside = new Set<string>()
  let sighting = first
  for (let round = 0; ; round++) {
    const seen = outsideSeen(root, sighting)
    if (seen !== undefined) outside.add(seen)
    const verdict = placeVerdict(at.expected, sighting, mine)
    if (verdict !== 'unsure' || round >= SETTLE_ROUNDS) return { verdict, outside: [...outside] }
    sighting = after([await look(s, at.where)], await probe(s, at.where, at.file, 'lstat'))
  }
}

/** Attempts (one round trip each) to remove a temp file or directory that a swapped link sent out of the root. */
const HUNT_ROUNDS = 16

/** Where a {@link hunt} also looks each round: `dir`, the directory the entry was made in, by the server's realpath. */
export interface HuntWatch {
  readonly s: Session
  readonly root: string
  readonly dir: string
}

/**
 * Removes what a write left astray (a staging directory, a directory it made):
 * `remove` is tried at each of `places` (its own path, and the outside places
 * a probe saw it at), again and again for a bounded number of round trips
 * while a swapped directory on its path may lead to it once more. Its name is
 * random, so whatever answers to it is this write's; true once a removal worked.
 *
 * With `watch`, each round also sends `realpath(dir)`: where it leads out of the root, the
 * entry's name there becomes a place of the next rounds. A MKDIR that went out while every probe
 * around it hit the directory in place is found so: a swapper flipping `dir` cannot keep the
 * realpath in step for 16 round trips, and the place it shows is a real directory, not swapped.
 */
export async function hunt(first: readonly string[], remove: (p: string) => Promise<void>, watch?: HuntWatch): Promise<boolean> {
  const places = [...first]
  const name = posix.basename(places[0] ?? '')
  for (let round = 0; round < HUNT_ROUNDS; round++) {
    const real = watch === undefined ? undefined : watch.s.realpath(watch.dir).catch(() => undefined)
    const results = await Promise.allSettled(places.map(remove))
    const led = await real
    if (results.some((r) => r.status === 'fulfilled')) return true
    if (results.some((r) => r.status === 'rejected' && statusOf(r.reason) === undefined)) return false
    if (watch !== undefined && led !== undefined && !containsPath(watch.root, led)) {
      const place = `${led}/${name}`
      if (!places.includes(place)) places.push(place)
    }
  }
  return false
}
