import { posix } from 'node:path'
import { settle } from './checks.js'
import type { Session } from './connection.js'
import { release, tempName } from './names.js'
import { kindOf } from './paths.js'

/**
 * The server's clock, as this client can bound it without asking (SFTP has no "what time is it"):
 * an mtime the server set from its own clock (a MKDIR, an OPEN that created a file, a WRITE) while
 * a request was in flight lies between the client's times of sending and answering, give or take
 * the whole second SFTP v3 truncates it to. Every such sighting narrows the offset
 * `server − client`; ages are then given as bounds, never guessed.
 */
export class ServerClock {
  /** Bounds of `server − client`, in ms. */
  #lo = Number.NEGATIVE_INFINITY
  #hi = Number.POSITIVE_INFINITY

  /**
   * Takes in an mtime (whole seconds) the server set while a request sent at `sentMs` and
   * answered at `answeredMs` (this client's `Date.now()`) was in flight.
   */
  observe(mtimeSeconds: number, sentMs: number, answeredMs: number): void {
    if (!Number.isFinite(mtimeSeconds)) return
    const lo = mtimeSeconds * 1000 - answeredMs
    const hi = (mtimeSeconds + 1) * 1000 - sentMs
    const [nextLo, nextHi] = [Math.max(this.#lo, lo), Math.min(this.#hi, hi)]
    // Bounds that cross: one of the clocks stepped. The latest sighting wins.
    if (nextLo > nextHi) [this.#lo, this.#hi] = [lo, hi]
    else [this.#lo, this.#hi] = [nextLo, nextHi]
  }

  /** True once a sighting bounds the offset. */
  get known(): boolean {
    return Number.isFinite(this.#lo) && Number.isFinite(this.#hi)
  }

  /**
   * Bounds of the age (ms) of an mtime of whole seconds by the server's clock now: `lo` it is at
   * least that old, `hi` at most. Without a sighting, `slackMs` either side of this client's clock.
   */
  age(mtimeSeconds: number, slackMs = 5_000): { lo: number; hi: number } {
    const now = Date.now()
    const [lo, hi] = this.known ? [this.#lo, this.#hi] : [-slackMs, slackMs]
    return { lo: now + lo - (mtimeSeconds + 1) * 1000, hi: now + hi - mtimeSeconds * 1000 }
  }

  /** True when an mtime is surely older than `ms` by the server's clock. */
  olderThan(mtimeSeconds: number, ms: number): boolean {
    return this.age(mtimeSeconds).lo > ms
  }
}

/**
 * Bounds the server's clock when no sighting did yet: a stage made and removed at once in `dir`
 * (one round trip), its mtime set by the server. Nothing is bounded when that fails (the clock
 * then keeps its slack).
 */
export async function sightClock(s: Session, dir: string, clock: ServerClock): Promise<void> {
  const name = tempName()
  const path = posix.join(dir, name)
  try {
    const sent = Date.now()
    const made = s.mkdir(path, { mode: 0o700 })
    const seen = settle(s.lstat(path))
    const removed = s.rmdir(path).catch(() => undefined)
    const [attrs] = await Promise.all([seen, made.catch(() => undefined), removed])
    if (attrs !== undefined && kindOf(attrs.mode) === 'directory') clock.observe(attrs.mtime, sent, Date.now())
  } finally {
    release(name)
  }
}
