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
  return new HeldFile(info, held, path, signal, translate)
}

const NO_BYTES = new Uint8Array(0)

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/**
 * {@link heldFileOf}'s answer, its own chunks' iterator: a class, so that {@link takeHeldBytes} knows
 * its own (a copy a layer makes is not one), and so that an open costs one object and one closure.
 * Object literals with a computed `Symbol.asyncIterator` key, made per call, cost about ten times
 * that here, and (measured on Node 20 under a large heap) outlived young collections.
 */
class HeldFile implements FsOpenFile, AsyncIterableIterator<Uint8Array> {
  readonly info: FsInfo
  /** The file itself, its chunks' iterator; own, so that a copy of the answer (`{ ...file }`) keeps it. */
  readonly chunks: AsyncIterable<Uint8Array>
  /** Own, not on the prototype: a caller may pass `file.close` on by itself. */
  readonly close: () => Promise<void>
  readonly #held: readonly Uint8Array[]
  readonly #path: string
  readonly #signal: AbortSignal | undefined
  readonly #translate: Translate
  #next = 0

  constructor(info: FsInfo, held: readonly Uint8Array[], path: string, signal: AbortSignal | undefined, translate: Translate) {
    this.info = info
    this.#held = held
    this.#path = path
    this.#signal = signal
    this.#translate = translate
    this.chunks = this
    this.close = () => {
      this.#next = this.#held.length
      return Promise.resolve()
    }
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    const held = this.#held
    if (this.#next >= held.length) return this.return()
    const signal = this.#signal
    if (signal?.aborted === true) {
      this.#next = held.length
      return Promise.reject(this.#translate(FsError.aborted('read', signal.reason, { path: this.#path })))
    }
    return Promise.resolve({ done: false, value: held[this.#next++] as Uint8Array })
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    this.#next = this.#held.length
    return Promise.resolve(DONE)
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    return this
  }

  /** See {@link takeHeldBytes}: nothing once a chunk was asked for, for more than one chunk, or under an aborted signal. */
  take(): Uint8Array | undefined {
    if (this.#next !== 0 || this.#held.length > 1 || this.#signal?.aborted === true) return undefined
    this.#next = this.#held.length
    return this.#held[0] ?? NO_BYTES
  }
}

/**
 * The whole content of `file`, an answer of core's `openFile`, when the store handed it over at the
 * open (a small local file, a memory file: one chunk or none, already read) and no chunk was asked
 * for yet; `undefined` otherwise (the chunks are still to come, or a layer made its own answer),
 * and once the signal of the `openFile` call aborted (the chunks then fail with `FS_ABORTED`, as the
 * caller should be told).
 * Taking them ends the file: its chunks then yield nothing and nothing is left to release
 * (`close()` is still allowed). The array may be the store's own: read it, never change it.
 *
 * For a reader of small files (the read tool) that would otherwise pay a few promise turns for a
 * chunk that is already there.
 */
export function takeHeldBytes(file: FsOpenFile): Uint8Array | undefined {
  return file instanceof HeldFile ? file.take() : undefined
}
