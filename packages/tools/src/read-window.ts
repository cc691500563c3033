import { Buffer } from 'node:buffer'
import type { FsOpenFile } from '@seamfs/core'
import { takeHeldBytes } from '@seamfs/core/backend'

/** One numbered line of a read window. */
export interface ReadLine {
  readonly number: number
  readonly text: string
}

/** A read window: what {@link windowOfText} and `ByteLineWindow` produce. */
export interface ReadWindow {
  readonly lines: ReadLine[]
  /** Exact line count of the whole file. */
  readonly totalLines: number
  /** Selection stopped because the next line would pass the byte cap. */
  readonly truncatedByBytes: boolean
}

export interface WindowLimits {
  /** 1-based first line. */
  readonly offset: number
  readonly limit: number
  readonly maxLineLength: number
  readonly maxBytes: number
}

/**
 * The window of a text held whole (a file decoded at once): the lines from `offset` on, at most
 * `limit` of them, each cut to `maxLineLength` characters plus a suffix, stopping before the line
 * that would pass `maxBytes` (the first always fits); and the exact line count. Lines end at `\n`;
 * one trailing `\r` is dropped; a final segment is a line only when non-empty.
 */
export function windowOfText(text: string, limits: WindowLimits): ReadWindow {
  const { offset, limit, maxLineLength, maxBytes } = limits
  const lines: ReadLine[] = []
  let number = 1
  let bytes = 0
  let truncatedByBytes = false
  let from = 0
  while (from < text.length) {
    const newline = text.indexOf('\n', from)
    const end = newline === -1 ? text.length : newline
    if (number >= offset && lines.length < limit && !truncatedByBytes) {
      const length = end > from && text.charCodeAt(end - 1) === CR ? end - 1 - from : end - from
      const shown =
        length > maxLineLength ? `${text.slice(from, from + maxLineLength)}... (line truncated to ${maxLineLength} chars)` : text.slice(from, from + length)
      const cost = Buffer.byteLength(shown, 'utf8') + (lines.length > 0 ? 1 : 0)
      // The first line of a window always fits: a cap below one line must not make a footer that
      // points back at the same offset forever.
      if (lines.length > 0 && bytes + cost > maxBytes) truncatedByBytes = true
      else {
        bytes += cost
        lines.push({ number, text: shown })
      }
    } else if (number >= offset) {
      // The window is closed: the rest is only counted.
      number += countLines(text, from)
      break
    }
    number++
    if (newline === -1) break
    from = newline + 1
  }
  return { lines, totalLines: number - 1, truncatedByBytes }
}

const CR = 0x0d

/** The lines of `text` from `from` on: its newlines, and one more for a non-empty last segment. */
function countLines(text: string, from: number): number {
  let count = 0
  let at = text.indexOf('\n', from)
  let last = from
  while (at !== -1) {
    count++
    last = at + 1
    at = text.indexOf('\n', last)
  }
  return last < text.length ? count + 1 : count
}

/** A selected line as shown: `head` holds its first units (all of them when `length` ≤ `max`), `length` its full length without the CR. */
export function lineText(head: string, length: number, max: number): string {
  return length > max ? `${head.slice(0, max)}... (line truncated to ${max} chars)` : head.slice(0, length)
}

/** The read footer: capped, more to read, or end of file. */
export function readFooter(offset: number, window: ReadWindow): string {
  const last = window.lines.at(-1)
  const end = last === undefined ? offset - 1 : last.number
  if (window.truncatedByBytes) return `(Output capped. Showing lines ${offset}-${end}. Use offset=${end + 1} to continue.)`
  if (end < window.totalLines) {
    return `(Showing lines ${offset}-${end} of ${window.totalLines}. Use offset=${end + 1} to continue.)`
  }
  return `(End of file - total ${window.totalLines} lines)`
}

/**
 * The chunks of an opened file, read once and in order, with its first bytes looked at before the
 * rest is consumed. A chunk is the source's again once the next one is asked for (it may reuse its
 * buffer), so a chunk kept across that is copied first.
 */
export class ChunkReader {
  readonly #source: AsyncIterator<Uint8Array> | undefined
  /** Copies of chunks received and not yet handed out, in order. */
  #kept: Uint8Array[] = []
  #keptBytes = 0
  /** The chunk received last, not yet handed out: the source's until the next one is asked for. */
  #held: Uint8Array | undefined
  #ended = false
  /**
   * The file's whole content when the store handed it over at the open (core's `takeHeldBytes`):
   * there is nothing left to receive or release. Read it, never change it.
   */
  readonly whole: Uint8Array | undefined

  /** The reader of `file`'s chunks; of its content at once, where the store handed it over whole at the open. */
  static of(file: FsOpenFile): ChunkReader {
    const whole = takeHeldBytes(file)
    return whole === undefined ? new ChunkReader(file.chunks) : new ChunkReader(undefined, whole)
  }

  constructor(chunks: AsyncIterable<Uint8Array> | undefined, whole?: Uint8Array) {
    this.#source = chunks?.[Symbol.asyncIterator]()
    this.whole = whole
    if (whole !== undefined) {
      this.#kept.push(whole)
      this.#keptBytes = whole.length
    }
    if (this.#source === undefined) this.#ended = true
  }

  /** The first `n` bytes (fewer in a shorter file), a copy; nothing is consumed. */
  async head(n: number): Promise<Uint8Array> {
    while (this.#keptBytes + (this.#held?.length ?? 0) < n && (await this.#pull()));
    const parts = this.#held === undefined ? this.#kept : [...this.#kept, this.#held]
    return Buffer.concat(parts, Math.min(n, this.#keptBytes + (this.#held?.length ?? 0)))
  }

  /** Every remaining byte in one array of its own, or `undefined` as soon as there are more than `limit`. */
  async all(limit: number): Promise<Uint8Array | undefined> {
    while (await this.#pull()) if (this.#keptBytes > limit) return undefined
    const last = this.#held
    this.#held = undefined
    if (last !== undefined) {
      this.#kept.push(Buffer.from(last))
      this.#keptBytes += last.length
    }
    if (this.#keptBytes > limit) return undefined
    const kept = this.#kept
    this.#kept = []
    this.#keptBytes = 0
    const [only] = kept
    return kept.length === 1 && only !== undefined ? only : Buffer.concat(kept)
  }

  /** The remaining chunks, those looked at first; each is the caller's until it asks for the next one. */
  async *rest(): AsyncGenerator<Uint8Array> {
    const kept = this.#kept
    this.#kept = []
    this.#keptBytes = 0
    yield* kept
    for (;;) {
      const held = this.#held
      this.#held = undefined
      if (held !== undefined) yield held
      if (this.#ended || this.#source === undefined) return
      const step = await this.#source.next()
      if (step.done === true) this.#ended = true
      else this.#held = step.value
    }
  }

  /** Receives one more chunk (copying the one held before asking); false at the end. */
  async #pull(): Promise<boolean> {
    if (this.#ended || this.#source === undefined) return false
    const held = this.#held
    if (held !== undefined) {
      this.#kept.push(Buffer.from(held))
      this.#keptBytes += held.length
      this.#held = undefined
    }
    const step = await this.#source.next()
    if (step.done === true) {
      this.#ended = true
      return false
    }
    this.#held = step.value
    return true
  }
}
