import { FsError, type FsVerb } from './errors.js'

/** How long a caller may wait its turn, and what it is for (the error says so). */
export interface MutexWait {
  readonly verb: FsVerb
  readonly path: string
  /** An abort leaves the queue at once with `FS_ABORTED`. */
  readonly signal?: AbortSignal | undefined
  /** `Date.now()` ms at which the wait gives up with a retryable `FS_IO_ERROR`. */
  readonly deadline?: number | undefined
}

/**
 * A FIFO async mutex per key: `run(key, fn)` starts `fn` once every earlier
 * `run` on the same key has settled (fulfilled or rejected). Keys with no
 * waiter hold no memory. A caller given a `wait` leaves the queue when its
 * signal aborts or its deadline passes; those behind it keep their order and
 * still wait for those ahead of it.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>()

  /** Number of keys currently held or awaited. */
  get size(): number {
    return this.#tails.size
  }

  async run<T>(key: string, fn: () => Promise<T>, wait?: MutexWait): Promise<T> {
    const previous = this.#tails.get(key)
    let release!: () => void
    const done = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = previous === undefined ? done : previous.then(() => done)
    this.#tails.set(key, tail)
    let left = false
    try {
      if (previous !== undefined) {
        if (wait === undefined) await previous
        else left = !(await waitTurn(previous, wait))
        if (left) throwWaitEnd(wait as MutexWait)
      }
      return await fn()
    } finally {
      const settle = (): void => {
        release()
        if (this.#tails.get(key) === tail) this.#tails.delete(key)
      }
      // One who left the queue lets the next go only once those ahead of it are done.
      if (left) void previous?.then(settle)
      else settle()
    }
  }
}

/** True when `previous` settled first; false when the signal aborted or the deadline passed. */
function waitTurn(previous: Promise<void>, wait: MutexWait): Promise<boolean> {
  if (wait.signal?.aborted === true || (wait.deadline !== undefined && Date.now() >= wait.deadline)) return Promise.resolve(false)
  return new Promise((resolve) => {
    const finish = (turn: boolean): void => {
      clearTimeout(timer)
      wait.signal?.removeEventListener('abort', onAbort)
      resolve(turn)
    }
    const onAbort = (): void => finish(false)
    const timer = wait.deadline === undefined ? undefined : setTimeout(() => finish(false), wait.deadline - Date.now())
    wait.signal?.addEventListener('abort', onAbort, { once: true })
    void previous.then(() => finish(true))
  })
}

function throwWaitEnd(wait: MutexWait): never {
  if (wait.signal?.aborted === true) throw FsError.aborted(wait.verb, wait.signal.reason)
  throw FsError.io(wait.verb, wait.path, 'busy: other operations of this process on the same target took the whole wait; try again later', {
    retryable: true,
  })
}
