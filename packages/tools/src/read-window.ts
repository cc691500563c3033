import { Buffer } from 'node:buffer'
import type { FsOpenFile } from '@seamfs/core'
import { takeHeldBytes } from '@seamfs/core/backend'

/** One numbered line of a read window. */
export interface ReadLine {
  readonly number: number
  readonly text: string
}

/** What {@link LineWindow} produces. */
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
 * Cuts a line window out of text pushed in chunks, in bounded memory: it keeps
 * the selected lines (each at most `maxLineLength` characters plus a suffix)
 * and at most `maxLineLength + 1` characters of the line in progress, and only
 * counts the rest, so a huge file or a newline-free giant line costs no more
 * than the window. Lines end at `\n`; one trailing `\r` is dropped; a final
 * segment is a line only when non-empty.
 */
export class LineWindow {
  readonly #limits: WindowLimits
  readonly #lines: ReadLine[] = []
  /** Number of the line in progress (1-based). */
  #number = 1
  /** Kept prefix of the line in progress (only while it may be selected). */
  #head = ''
  /** Full length of the line in progress, in UTF-16 units. */
  #length = 0
  #lastChar = ''
  #bytes = 0
  #truncatedByBytes = false

  constructor(limits: WindowLimits) {
    this.#limits = limits
  }

  push(chunk: string): void {
    let from = 0
    while (from < chunk.length) {
      if (!this.#selecting()) {
        from = this.#skip(chunk, from)
        continue
      }
      const newline = chunk.indexOf('\n', from)
      const end = newline === -1 ? chunk.length : newline
      if (end > from) this.#append(chunk, from, end)
      if (newline === -1) return
      this.#finishLine()
      from = newline + 1
    }
  }

  end(): ReadWindow {
    if (this.#length > 0) this.#finishLine()
    return { lines: this.#lines, totalLines: this.#number - 1, truncatedByBytes: this.#truncatedByBytes }
  }

  /**
   * The fast path for lines that are not selected (before the offset, or after
   * the window closed): only counts them, keeping nothing. Whether a line is
   * selected never changes while it is in progress, so a line is handled by
   * this path or the other one, never both. Returns where it stopped: the
   * start of the first line that may be selected, or the end of the chunk.
   */
  #skip(chunk: string, from: number): number {
    const closed = this.#lines.length >= this.#limits.limit || this.#truncatedByBytes
    const stop = closed ? Number.POSITIVE_INFINITY : this.#limits.offset
    let number = this.#number
    let length = this.#length
    let at = from
    while (number < stop) {
      const newline = chunk.indexOf('\n', at)
      if (newline === -1) {
        length += chunk.length - at
        at = chunk.length
        break
      }
      number++
      length = 0
      at = newline + 1
    }
    this.#number = number
    this.#length = length
    return at
  }

  #selecting(): boolean {
    return this.#number >= this.#limits.offset && this.#lines.length < this.#limits.limit && !this.#truncatedByBytes
  }

  #append(chunk: string, from: number, end: number): void {
    if (this.#selecting()) {
      const room = this.#limits.maxLineLength + 2 - this.#head.length
      if (room > 0) this.#head += chunk.slice(from, Math.min(end, from + room))
    }
    this.#length += end - from
    this.#lastChar = chunk.charAt(end - 1)
  }

  #finishLine(): void {
    if (this.#selecting()) {
      const length = this.#lastChar === '\r' ? this.#length - 1 : this.#length
      const text = lineText(this.#head, length, this.#limits.maxLineLength)
      const cost = Buffer.byteLength(text, 'utf8') + (this.#lines.length > 0 ? 1 : 0)
      // The first line of a window always fits: a cap below one line must not make a footer that
      // points back at the same offset forever.
      if (this.#lines.length > 0 && this.#bytes + cost > this.#limits.maxBytes) this.#truncatedByBytes = true
      else {
        this.#bytes += cost
        this.#lines.push({ number: this.#number, text })
      }
    }
    this.#number++
    this.#head = ''
    this.#length = 0
    this.#lastChar = ''
  }
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
