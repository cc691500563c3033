/** Reading GET bodies: whole, or as decoded text chunks; length checked, released on abort. */
import { constants as bufferConstants } from 'node:buffer'
import type { Readable } from 'node:stream'
import { abortedError, decodeTextStream, FsError } from '@seamfs/core'
import { toFsError } from './errors.js'

const endedEarly = (path: string): FsError =>
  new FsError('FS_IO_ERROR', `cannot read "${path}": the response ended before the whole object arrived`, { retryable: true })

/** Destroys `body` when `signal` aborts; returns the unsubscribe function. */
export function abortBodyOn(body: Readable, signal: AbortSignal | undefined): () => void {
  if (signal === undefined) return () => undefined
  const onAbort = (): void => {
    body.destroy(abortedError('read', signal.reason))
  }
  signal.addEventListener('abort', onAbort, { once: true })
  return () => signal.removeEventListener('abort', onAbort)
}

/** Reads a body of `size` bytes whole; a body that ends early (or runs long) is an I/O error. */
export async function readBody(body: Readable, size: number, path: string): Promise<Uint8Array> {
  if (size > bufferConstants.MAX_LENGTH) {
    throw new FsError('FS_TOO_LARGE', `cannot read "${path}": ${size} bytes exceed the largest buffer (use streamText)`)
  }
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (at + chunk.byteLength > size) throw endedEarly(path)
    chunk.copy(out, at)
    at += chunk.byteLength
  }
  if (at !== size) throw endedEarly(path)
  return out
}

async function* countedChunks(body: Readable, size: number, path: string): AsyncGenerator<Uint8Array, void, undefined> {
  let received = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    received += chunk.byteLength
    yield chunk
  }
  if (received !== size) throw endedEarly(path)
}

/** Decoded text chunks straight from a GET body; the body is released however iteration ends. */
export async function* streamBody(body: Readable, size: number, path: string, signal: AbortSignal | undefined): AsyncGenerator<string, void, undefined> {
  const unsubscribe = abortBodyOn(body, signal)
  try {
    yield* decodeTextStream(countedChunks(body, size, path), path, signal)
  } catch (err) {
    throw toFsError(err, 'read', path)
  } finally {
    unsubscribe()
    body.destroy()
  }
}
