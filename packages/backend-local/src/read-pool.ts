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

/** Capacities are rounded up to this, so that a file a few bytes longer after its edit fits the same buffer. */
const GRAIN = 64 * 1024

/** The pool is emptied after this long without an edit (ms): a process that stopped editing holds none of it. */
const IDLE_MS = 1000

export class ReadPool {
  readonly #free: Buffer[] = []
  #idle: ReturnType<typeof setTimeout> | undefined

  /** A buffer of at least `size` bytes that no one else holds, or `undefined` for a size the pool does not serve. Give it back with {@link give}. */
  take(size: number): Buffer | undefined {
    if (size < POOLED_MIN_BYTES || size > POOLED_MAX_BYTES) return undefined
    const i = this.#free.findIndex((buffer) => buffer.length >= size)
    if (i !== -1) return this.#free.splice(i, 1)[0]
    return Buffer.allocUnsafeSlow(Math.ceil(size / GRAIN) * GRAIN)
  }

  /** `buffer` (from {@link take}) is free again: its bytes may be overwritten by the next edit. */
  give(buffer: Buffer): void {
    if (this.#free.length < POOL_BUFFERS) this.#free.push(buffer)
    if (this.#idle === undefined) this.#idle = setTimeout(() => this.#drain(), IDLE_MS).unref()
    else this.#idle.refresh()
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
