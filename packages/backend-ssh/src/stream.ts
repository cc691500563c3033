import type { Session } from './connection.js'

/** Reads kept in flight by a stream (bounded memory: 8 × 64 KiB). */
const STREAM_WINDOW = 8
const STREAM_CHUNK = 64 * 1024

/**
 * Streams a remote file's bytes with a window of reads in flight; a short read
 * restarts the window where it ended. The handle is opened on the first `next()`,
 * so an iterable that is never consumed holds nothing; `return()` closes it.
 */
export async function* streamFile(s: Session, key: string): AsyncGenerator<Uint8Array> {
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
      const next = window.shift() as { offset: number; read: Promise<Buffer> }
      const chunk = await next.read
      if (chunk.length === 0) break
      if (chunk.length < STREAM_CHUNK) {
        window.length = 0
        offset = next.offset + chunk.length
      }
      fill()
      yield chunk
    }
  } finally {
    if (handle !== undefined) s.close(handle).catch(() => undefined)
  }
}
