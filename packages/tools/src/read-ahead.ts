/**
 * grep's reads, run ahead of its matcher: started while the walk still lists directories (as each
 * file is found) and, after it, in search order; bounded in bytes and in files held, and in calls
 * in flight by the search's one {@link Limiter}, which the walk shares (its calls go first).
 */
import type { InOrderOptions, Limiter } from './bounded.js'

/** How a {@link ReadAhead} reads. */
export interface ReadAheadOptions<F, R> {
  readonly limiter: Limiter
  /** The most bytes held by reads not yet handed to the matcher (one file is always let through). */
  readonly budget: number
  /** The most files read ahead of the matcher. */
  readonly files: number
  /** What reading `file` may hold, in bytes. */
  readonly cost: (file: F) => number
  readonly read: (file: F) => Promise<R>
  /** The search's budget check; a read is never started once it throws. */
  readonly check: () => void
}

export class ReadAhead<F, R> {
  readonly #options: ReadAheadOptions<F, R>
  /** Reads started while the walk ran, not yet handed to the matcher. */
  readonly #early = new Map<F, Promise<R>>()
  #held = 0

  constructor(options: ReadAheadOptions<F, R>) {
    this.#options = options
  }

  /** A file the walk just found: read now, if the budget has room. */
  offer(file: F): void {
    const { budget, files, cost, limiter, read, check } = this.#options
    if (this.#early.size >= files || this.#held + cost(file) > budget) return
    try {
      check()
    } catch {
      return
    }
    this.#held += cost(file)
    const reading = limiter.run(() => read(file))
    reading.catch(() => undefined)
    this.#early.set(file, reading)
  }

  /** The read of `file`: the one started early, or a new one. */
  read(file: F): Promise<R> {
    const early = this.#early.get(file)
    if (early === undefined) return this.#options.limiter.run(() => this.#options.read(file))
    this.#early.delete(file)
    return early
  }

  /** `inOrder`'s options over the files in search order: their reads admitted, started and released within the budget. */
  inOrder(lookahead: number): InOrderOptions<F> {
    const { budget, cost, check } = this.#options
    return {
      admit: (file) => this.#early.has(file) || this.#held + cost(file) <= budget,
      beforeStart: (file) => {
        check()
        if (!this.#early.has(file)) this.#held += cost(file)
      },
      release: (file) => {
        this.#held -= cost(file)
      },
      lookahead,
    }
  }
}
