/** Reading GET bodies: whole or as chunks; length checked, released on abort and on every exit. */
import type { Readable } from 'node:stream'
import { abortedError, FsError, type ByteChunks, type FsVerb } from '@seamfs/core/backend'
import { noteOutcome } from './errors.js'

const endedEarly = (verb: FsVerb, path: string): FsError => FsError.io(verb, path, 'the response ended before the whole object arrived', { retryable: true })

/** Destroys `body` when `signal` aborts (or already has); returns the unsubscribe function. */
function abortBodyOn(body: Readable, verb: FsVerb, signal: AbortSignal | undefined): () => void {
  if (signal === undefined) return () => undefined
  const onAbort = (): void => {
    body.destroy(abortedError(verb, signal.reason))
  }
  if (signal.aborted) onAbort()
  else signal.addEventListener('abort', onAbort, { once: true })
  return () => signal.removeEventListener('abort', onAbort)
}

/** What a read is for: the verb and path its errors name, and the signal that stops it. */
export interface ReadFor {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
}

/**
 * Reads a body of `size` bytes whole (a body that ends early or runs long is a retryable I/O
 * error), or, when `wanted()` is false, not at all (`null`). `wanted` runs on the headers alone
 * and may throw (a guard, a size limit): the body is then released unread. The body is
 * destroyed however this ends, so a refused object is never downloaded. A failure of the body
 * (its connection cut or idle) is a read's: it never makes the caller's mutation indeterminate.
 */
export async function readBody(body: Readable, size: number, { verb, path, signal }: ReadFor, wanted: () => boolean): Promise<Uint8Array | null> {
  try {
    if (!wanted()) return null
    const unsubscribe = abortBodyOn(body, verb, signal)
    try {
      const out = Buffer.allocUnsafe(size)
      let at = 0
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (at + chunk.byteLength > size) throw endedEarly(verb, path)
        chunk.copy(out, at)
        at += chunk.byteLength
      }
      if (at !== size) throw endedEarly(verb, path)
      return out
    } catch (err) {
      throw noteOutcome(err, { mutation: false, lostAnswer: false })
    } finally {
      unsubscribe()
    }
  } finally {
    body.destroy()
  }
}

/**
 * The chunks of a body of `size` bytes, for `openBytes`. The body is released when iteration
 * ends, fails or is stopped by `return()`, also before the first chunk was asked for (a
 * generator would skip its `finally` then).
 */
export function bodyChunks(body: Readable, size: number, path: string, signal: AbortSignal | undefined): ByteChunks {
  const unsubscribe = abortBodyOn(body, 'read', signal)
  const source = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
  let received = 0
  const release = (): void => {
    unsubscribe()
    body.destroy()
  }
  const iterator: AsyncIterator<Uint8Array> = {
    async next() {
      try {
        const step = await source.next()
        if (step.done !== true) {
          received += step.value.byteLength
          return step
        }
        if (received !== size) throw endedEarly('read', path)
        release()
        return { done: true, value: undefined }
      } catch (err) {
        release()
        throw err
      }
    },
    async return() {
      release()
      return { done: true, value: undefined }
    },
  }
  return { [Symbol.asyncIterator]: () => iterator }
}
