import { abortableChunks, releaseChunks, untilAborted } from './abort-wait.js'
import { FsError, throwIfAborted } from './errors.js'
import type { Awaitable, ByteChunks } from './hooks.js'
import { decodeTextStream } from './text.js'
import type { FsInfo, FsOpenFile } from './types.js'

/** Turns anything a stream's hook throws into the `FsError` of the call. */
type Translate = (err: unknown) => FsError

/**
 * `openBytes` with the abort checks of a stream (`streamText`, `streamBytes`): the open ends at the
 * abort, and what the backend opened is released when the caller aborted meanwhile (also when it
 * answers late).
 */
export async function openStream(open: () => Awaitable<ByteChunks>, path: string, signal: AbortSignal | undefined, translate: Translate): Promise<ByteChunks> {
  throwIfAborted(signal, 'read', path)
  let source: ByteChunks
  try {
    source = await untilAborted(open(), signal, 'read', (late) => void releaseChunks(late))
  } catch (err) {
    throw translate(err)
  }
  if (signal?.aborted === true) {
    // Aborted while opening: release what the backend opened before reporting it.
    await releaseChunks(source)
    throw FsError.aborted('read', signal.reason, { path })
  }
  return source
}

/** `streamBytes`' chunks: each waited for no longer than the signal allows, the signal checked before each. */
export async function* byteStream(source: ByteChunks, path: string, signal: AbortSignal | undefined, translate: Translate): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of abortableChunks(source, signal, 'read')) {
      // Checked before each chunk too: a source at hand (a plain iterable) has no wait to race.
      throwIfAborted(signal, 'read', path)
      yield chunk
    }
  } catch (err) {
    throw translate(err)
  }
}

/**
 * `stream` (a generator over `source`) whose `return()` before the first `next()` releases `source`:
 * a generator that never started skips its cleanup, so a caller that opened a stream and let it go
 * unread would leave the store's file (a descriptor, a socket) open.
 */
export function releasedUnread<T>(stream: AsyncGenerator<T>, source: ByteChunks): AsyncIterableIterator<T> {
  let started = false
  const iterator: AsyncIterableIterator<T> = {
    next: () => {
      started = true
      return stream.next()
    },
    return: async (value?: T) => {
      if (!started) {
        started = true
        await releaseChunks(source)
      }
      return stream.return(value)
    },
    [Symbol.asyncIterator]: () => iterator,
  }
  return iterator
}

/** `streamText`'s chunks: the bytes decoded under `readText`'s rules, a character never split. */
export async function* textStream(source: ByteChunks, path: string, signal: AbortSignal | undefined, translate: Translate): AsyncGenerator<string> {
  try {
    yield* decodeTextStream(abortableChunks(source, signal, 'read'), path, signal)
  } catch (err) {
    throw translate(err)
  }
}

/**
 * `openFile`'s answer over what `openTarget` opened: `chunks` as `streamBytes` yields them, and a
 * `close()` that releases the file whether or not its chunks were asked for (a generator that never
 * started would skip its cleanup).
 */
export function openFileOf(info: FsInfo, source: ByteChunks, path: string, signal: AbortSignal | undefined, translate: Translate): FsOpenFile {
  if (Array.isArray(source)) return heldFileOf(info, source as readonly Uint8Array[], path, signal, translate)
  const stream = byteStream(source, path, signal, translate)
  let started = false
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    if (started) await stream.return(undefined).catch(() => undefined)
    else await releaseChunks(source)
  }
  const iterator: AsyncIterableIterator<Uint8Array> = {
    next: () => {
      if (closed) return Promise.resolve({ done: true, value: undefined })
      started = true
      return stream.next()
    },
    return: async () => {
      await close()
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]: () => iterator,
  }
  return { info, chunks: { [Symbol.asyncIterator]: () => iterator }, close }
}

/**
 * {@link openFileOf} over chunks the store already handed over whole (a small file read at the
 * open): the same answers as {@link byteStream} gives for them (the signal checked before each
 * chunk), without its generators, whose turns cost a small read more than its bytes do.
 */
function heldFileOf(info: FsInfo, held: readonly Uint8Array[], path: string, signal: AbortSignal | undefined, translate: Translate): FsOpenFile {
  let next = 0
  const end = (): Promise<IteratorResult<Uint8Array>> => {
    next = held.length
    return Promise.resolve({ done: true, value: undefined })
  }
  const iterator: AsyncIterableIterator<Uint8Array> = {
    next: () => {
      if (next >= held.length) return end()
      if (signal?.aborted === true) {
        next = held.length
        return Promise.reject(translate(FsError.aborted('read', signal.reason, { path })))
      }
      return Promise.resolve({ done: false, value: held[next++] as Uint8Array })
    },
    return: end,
    [Symbol.asyncIterator]: () => iterator,
  }
  return {
    info,
    chunks: { [Symbol.asyncIterator]: () => iterator },
    close: async () => void (await end()),
  }
}
