import { randomInt } from 'node:crypto'
import { abortedError, type FsVerb } from '@seamfs/core/backend'
import { droppedConnection } from './errors.js'

/**
 * The waits before each retry of a read (ms, a random delay within each window: jitter, so
 * clients cut off together do not come back together): two retries after the first attempt.
 */
export const READ_RETRY_BACKOFF: readonly (readonly [number, number])[] = [
  [50, 250],
  [200, 800],
]

/**
 * Runs a read (`stat`, `lstat`, `resolve`, `list`, `read`: nothing it sends changes the store)
 * and runs it again, over a new connection, when it failed because the connection dropped (a
 * {@link droppedConnection}: not a status the server sent), up to twice, after the waits of
 * {@link READ_RETRY_BACKOFF}. Never for a mutation: its request may have taken effect. An aborted
 * `signal` ends the retries (and a wait) at once. The last failure is the one thrown.
 */
export async function retryRead<T>(verb: FsVerb, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      const wait = READ_RETRY_BACKOFF[attempt]
      if (wait === undefined || signal?.aborted === true || !droppedConnection(err)) throw err
      await sleep(randomInt(wait[0], wait[1] + 1), signal, verb)
    }
  }
}

/** Waits `ms`, or rejects with `FS_ABORTED` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined, verb: FsVerb): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(abortedError(verb, signal?.reason))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
