import { TextChunkDecoder, throwIfAborted } from '@seamfs/core'
import type { Session } from './connection.js'
import { toFsError } from './errors.js'

/** Reads kept in flight by a stream (bounded memory: 8 × 64 KiB). */
const STREAM_WINDOW = 8
const STREAM_CHUNK = 64 * 1024

/** Streams a remote file with a window of reads in flight; a short read restarts the window where it ended. */
export async function* streamFile(s: Session, key: string, displayPath: string, signal: AbortSignal | undefined): AsyncGenerator<string> {
  const decoder = new TextChunkDecoder(displayPath, 'read')
  let handle: Buffer | undefined
  const window: { offset: number; read: Promise<Buffer> }[] = []
  try {
    handle = await s.open(key, 'r')
    const open = handle
    let offset = 0
    const fill = (): void => {
      while (window.length < STREAM_WINDOW) {
        const read = s.readAt(open, offset, STREAM_CHUNK)
        read.catch(() => undefined)
        window.push({ offset, read })
        offset += STREAM_CHUNK
      }
    }
    fill()
    for (;;) {
      throwIfAborted(signal, 'read')
      const next = window.shift() as { offset: number; read: Promise<Buffer> }
      const chunk = await next.read
      if (chunk.length === 0) break
      if (chunk.length < STREAM_CHUNK) {
        window.length = 0
        offset = next.offset + chunk.length
      }
      fill()
      const text = decoder.push(chunk)
      if (text !== '') yield text
    }
    const tail = decoder.end()
    if (tail !== '') yield tail
  } catch (err) {
    throw toFsError(err, 'read', displayPath)
  } finally {
    if (handle !== undefined) s.close(handle).catch(() => undefined)
  }
}
