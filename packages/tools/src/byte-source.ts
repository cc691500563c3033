import type { FileSystem, FsTarget } from '@seamfs/core'
import { FileSystemLayer, FsError, throwIfAborted, translateError, type ByteChunks } from '@seamfs/core/backend'

/**
 * A read-only view of a filesystem that streams a file's raw bytes, for the read
 * tool's window ({@link ByteLineWindow} validates and counts them without decoding).
 *
 * `FileSystem` exposes text streams only, so this reaches the bytes the way a layer
 * does: through the wrapped filesystem's `openBytes` hook (a sandbox's hook keeps
 * its checks). It applies `streamText`'s rules but decoding: the abort check before
 * and after opening (releasing what was opened), between chunks, and the backend's
 * error table for foreign errors. A public byte stream in core would replace it.
 */
export class ByteReader extends FileSystemLayer {
  constructor(inner: FileSystem) {
    super(inner)
  }

  /** The file's chunks; open-time failures reject, later ones are thrown by the iterator. */
  async streamBytes(target: FsTarget, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const path = target.displayPath
    throwIfAborted(signal, 'read')
    let source: ByteChunks
    try {
      source = await this.openBytes(target, signal)
    } catch (err) {
      throw this.#translate(err, path)
    }
    if (signal?.aborted === true) {
      await release(source)
      throw FsError.aborted('read', signal.reason)
    }
    return this.#chunks(source, path, signal)
  }

  async *#chunks(source: ByteChunks, path: string, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of source) {
        if (signal?.aborted === true) throw FsError.aborted('read', signal.reason)
        yield chunk
      }
    } catch (err) {
      throw this.#translate(err, path)
    }
  }

  #translate(err: unknown, path: string): FsError {
    return translateError(err, 'read', path, (e) => this.errorRow(e))
  }
}

async function release(source: ByteChunks): Promise<void> {
  try {
    const chunks = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    await chunks.return?.()
  } catch {
    // nothing to report: the caller gets FS_ABORTED
  }
}
