import type { Session } from './connection.js'

/** Reads kept in flight by a stream (bounded memory: 8 × 64 KiB). */
const STREAM_WINDOW = 8
const STREAM_CHUNK = 64 * 1024

/**
 * Streams a remote file's bytes with a window of reads in flight; a short read
 * restarts the window where it ended. The file is opened (by `openFile`, which
 * is handed the function that sends the first window, so it can send it with
 * its own requests) on the first `next()`, so an iterable that is never
 * consumed holds nothing; `return()` closes it.
 */
export async function* streamFile(s: Session, openFile: (first: (handle: Buffer) => void) => Promise<Buffer>): AsyncGenerator<Uint8Array> {
  let handle: Buffer | undefined
  const window: { offset: number; read: Promise<Buffer> }[] = []
  let offset = 0
  const fill = (open: Buffer): void => {
    while (window.length < STREAM_WINDOW) {
      const read = s.readAt(open, offset, STREAM_CHUNK)
      read.catch(() => undefined)
      window.push({ offset, read })
      offset += STREAM_CHUNK
    }
  }
  try {
    handle = await openFile(fill)
    const open = handle
    for (;;) {
      const next = window.shift() as { offset: number; read: Promise<Buffer> }
      const chunk = await next.read
      if (chunk.length === 0) break
      if (chunk.length < STREAM_CHUNK) {
        window.length = 0
        offset = next.offset + chunk.length
      }
      fill(open)
      yield chunk
    }
  } finally {
    if (handle !== undefined) s.close(handle).catch(() => undefined)
  }
}
