/**
 * A FIFO async mutex per key: `run(key, fn)` starts `fn` once every earlier
 * `run` on the same key has settled (fulfilled or rejected). Keys with no
 * waiter hold no memory.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>()

  /** Number of keys currently held or awaited. */
  get size(): number {
    return this.#tails.size
  }

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key)
    let release!: () => void
    const done = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = previous === undefined ? done : previous.then(() => done)
    this.#tails.set(key, tail)
    try {
      if (previous !== undefined) await previous
      return await fn()
    } finally {
      release()
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
  }
}
