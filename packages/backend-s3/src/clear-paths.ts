/** What `resolve` remembers of its path checks, so a path in a directory it checked lately costs no request. */

/** At most this many directories are remembered; the oldest goes first. */
const MAX_REMEMBERED = 4096

/** When a check began (on the monotonic clock: a wall clock stepped back must not extend trust), and the invalidation count then. */
export interface CheckStart {
  readonly at: number
  readonly epoch: number
}

/**
 * Directories (relative paths) found to have no file on the path to them, and when that check
 * began. An entry is good for `ttlMs`; it is forgotten as soon as this instance writes an object
 * at the directory's key or an ancestor's (the only way to put a file on the path), and all are
 * forgotten on a remove or rename (a directory that vanishes changes where a file on the path is
 * looked for). A check that was still running when such a write began is not remembered.
 *
 * Another process (or another instance) can put a file on a remembered path: for up to `ttlMs`,
 * `resolve` then answers as it would have when it checked. Every operation on the target still
 * meets the store as it is: a create checks the path again, a read or stat finds nothing there.
 */
export class ClearPaths {
  readonly #ttlMs: number
  readonly #seen = new Map<string, number>()
  #epoch = 0

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs
  }

  /** Marks the start of a check whose answer may be remembered. */
  begin(): CheckStart {
    return { at: performance.now(), epoch: this.#epoch }
  }

  /** Whether `dir` was found clear less than `ttlMs` ago and nothing this instance did since can have changed that. */
  has(dir: string): boolean {
    const at = this.#seen.get(dir)
    if (at === undefined) return false
    if (performance.now() - at < this.#ttlMs) return true
    this.#seen.delete(dir)
    return false
  }

  /** Remembers `dir` as clear, as of `start`, unless a write or remove began since. */
  remember(dir: string, start: CheckStart): void {
    if (this.#ttlMs <= 0 || start.epoch !== this.#epoch) return
    this.#seen.delete(dir)
    if (this.#seen.size >= MAX_REMEMBERED) this.#seen.delete(this.#seen.keys().next().value as string)
    this.#seen.set(dir, start.at)
  }

  /**
   * Runs `put`, which writes an object at `rel`: `rel` and every directory below it are forgotten
   * before it starts and again when it ends (a check that ran meanwhile may have seen either state).
   */
  async writing<T>(rel: string, put: () => Promise<T>): Promise<T> {
    this.#forget(rel)
    try {
      return await put()
    } finally {
      this.#forget(rel)
    }
  }

  #forget(rel: string): void {
    this.#epoch++
    for (const dir of this.#seen.keys()) if (dir === rel || dir.startsWith(`${rel}/`)) this.#seen.delete(dir)
  }

  /** A remove or rename is about to begin or has ended, or a check found a file on a path: everything is forgotten. */
  clear(): void {
    this.#epoch++
    this.#seen.clear()
  }
}
