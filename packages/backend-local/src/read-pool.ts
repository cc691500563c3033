/**
 * The buffers edits read files into, used again from one edit to the next: an edit of a 1 MiB file
 * otherwise costs a fresh 1 MiB buffer that only V8's full collection frees (V8 counts such memory
 * toward starting one), and on a machine doing edits that collection, not the disk, is the bulk of
 * an edit's cost. Core keeps none of the bytes it was lent (`lendBytes`) once `transform` returns.
 */

/** Files below this are read into buffers of their own (Node's pool serves the small ones). */
export const POOLED_MIN_BYTES = 64 * 1024

/** Files above this are read into buffers of their own: the pool never holds more than {@link POOL_BUFFERS} of these. */
export const POOLED_MAX_BYTES = 16 * 1024 * 1024

/** The most buffers kept between edits (edits at once beyond it read into buffers of their own). */
const POOL_BUFFERS = 4

/** The most bytes kept between edits, all buffers together. */
const POOL_MAX_BYTES = 32 * 1024 * 1024

/** Capacities are rounded up to this, so that a file a few bytes longer after its edit fits the same buffer. */
const GRAIN = 64 * 1024

/** The pool is emptied after this long without an edit (ms): a process that stopped editing holds none of it. */
const IDLE_MS = 1000

export class ReadPool {
  readonly #free: Buffer[] = []
  #idle: ReturnType<typeof setTimeout> | undefined

  /**
   * A buffer of at least `size` bytes (and at most about twice that) that no one else holds, or
   * `undefined` for a size the pool does not serve. Give it back with {@link give}.
   */
  take(size: number): Buffer | undefined {
    if (size < POOLED_MIN_BYTES || size > POOLED_MAX_BYTES) return undefined
    // The smallest that fits, and none far larger than asked (a small edit does not hold a large buffer).
    let best = -1
    for (let i = 0; i < this.#free.length; i++) {
      const length = (this.#free[i] as Buffer).length
      if (length >= size && length <= size * 2 + GRAIN && (best === -1 || length < (this.#free[best] as Buffer).length)) best = i
    }
    if (best !== -1) return this.#free.splice(best, 1)[0]
    return Buffer.allocUnsafeSlow(Math.ceil(size / GRAIN) * GRAIN)
  }

  /** `buffer` (from {@link take}) is free again: its bytes may be overwritten by the next edit. */
  give(buffer: Buffer): void {
    this.#free.push(buffer)
    // Past the count or the bytes kept, the largest go first.
    if (this.#free.length > POOL_BUFFERS || this.#bytes() > POOL_MAX_BYTES) {
      this.#free.sort((x, y) => x.length - y.length)
      while (this.#free.length > POOL_BUFFERS || (this.#free.length > 0 && this.#bytes() > POOL_MAX_BYTES)) this.#free.pop()
    }
    if (this.#idle === undefined) this.#idle = setTimeout(() => this.#drain(), IDLE_MS).unref()
    else this.#idle.refresh()
  }

  #bytes(): number {
    let total = 0
    for (const buffer of this.#free) total += buffer.length
    return total
  }

  /** How many buffers wait for the next edit. */
  get size(): number {
    return this.#free.length
  }

  #drain(): void {
    this.#idle = undefined
    this.#free.length = 0
  }
}
