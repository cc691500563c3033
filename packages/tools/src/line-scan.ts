import { Buffer } from 'node:buffer'
import { countLineEnds, incompleteTail, TextChunkValidator } from '@seamfs/core/backend'
import { lineText, type ReadLine, type ReadWindow, type WindowLimits } from './read-window.js'

const LF = 0x0a
const CR = 0x0d
const encoder = new TextEncoder()
const EMPTY = Buffer.alloc(0)
/**
 * A selected line as the read tool shows it, and its UTF-8 size: `line` holds its
 * first bytes (all of them when `length` ≤ `keep`, the CR included).
 */
function shownLine(line: Buffer, length: number, keep: number, max: number): { text: string; size: number } {
  if (length > keep) {
    // Over 4 × (max + 2) bytes is over max units, CR or not: decode the complete characters of the kept head only.
    const head = line.subarray(0, keep)
    const text = lineText(head.toString('utf8', 0, head.length - incompleteTail(head)), max + 1, max)
    return { text, size: encoder.encode(text).length }
  }
  const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length
  const decoded = line.toString('utf8', 0, end)
  const text = lineText(decoded, decoded.length, max)
  // As many units as bytes is all ASCII: the size is known without encoding.
  return { text, size: decoded.length === end && text === decoded ? end : encoder.encode(text).length }
}

const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))

/**
 * `windowOfText` on raw bytes, in chunks: the same window, line count, byte cap and
 * `FS_NOT_TEXT` failures as core's strict decoding followed by `windowOfText`,
 * but lines outside the window are only counted (`\n` found on bytes), never
 * decoded; only the selected lines are. Which bytes are text (the NUL sample,
 * strict UTF-8, a character cut by a chunk boundary, a leading BOM) is core's
 * `TextChunkValidator`'s to say, the very checks `streamText` decodes after.
 * Memory: the selected lines, and at most `4 × (maxLineLength + 2)` bytes of
 * the line in progress.
 */
export class ByteLineWindow {
  readonly #limits: WindowLimits
  readonly #lines: ReadLine[] = []
  readonly #keep: number
  readonly #text: TextChunkValidator
  readonly #scan = (valid: Uint8Array): void => this.#scanValid(valid)
  #number = 1
  /** Byte length of the line in progress (a trailing CR included). */
  #length = 0
  /** Kept leading bytes of the line in progress, while it is selected. */
  #head: Buffer[] = []
  #headLength = 0
  #bytes = 0
  #truncatedByBytes = false

  constructor(limits: WindowLimits, path: string) {
    this.#limits = limits
    this.#text = new TextChunkValidator(path)
    // A UTF-16 unit takes at most 4 bytes: this many bytes hold maxLineLength + 1 units or the whole line.
    this.#keep = 4 * (limits.maxLineLength + 2)
  }

  /** Validates and scans the next chunk; the caller may reuse it afterwards. */
  push(chunk: Uint8Array): void {
    this.#text.push(chunk, this.#scan)
  }

  /** The window; a dangling partial character is `FS_NOT_TEXT`. */
  end(): ReadWindow {
    this.#text.end()
    if (this.#length > 0) this.#finishLine()
    return { lines: this.#lines, totalLines: this.#number - 1, truncatedByBytes: this.#truncatedByBytes }
  }

  /** Scans complete, valid characters (a leading BOM already dropped). */
  #scanValid(bytes: Uint8Array): void {
    const buffer = asBuffer(bytes)
    let from = 0
    while (from < buffer.length) {
      if (!this.#selecting()) {
        from = this.#skip(buffer, from)
        continue
      }
      const newline = buffer.indexOf(LF, from)
      if (newline === -1) {
        this.#append(buffer.subarray(from))
        return
      }
      this.#finishLine(buffer.subarray(from, newline))
      from = newline + 1
    }
  }

  /**
   * Counts lines that are not selected, keeping nothing. A rest of the chunk that ends before the
   * window (or lies after it) has its line ends counted at memory speed (`countLineEnds`), with no
   * search per line; the chunk where the window starts is searched line by line up to it.
   */
  #skip(buffer: Buffer, from: number): number {
    const closed = this.#lines.length >= this.#limits.limit || this.#truncatedByBytes
    const stop = closed ? Number.POSITIVE_INFINITY : this.#limits.offset
    let number = this.#number
    let length = this.#length
    const ends = countLineEnds(buffer, from, buffer.length)
    if (number + ends < stop) {
      this.#number = number + ends
      this.#length = ends === 0 ? length + buffer.length - from : buffer.length - (buffer.lastIndexOf(LF) + 1)
      return buffer.length
    }
    let at = from
    while (number < stop) {
      const newline = buffer.indexOf(LF, at)
      if (newline === -1) {
        length += buffer.length - at
        at = buffer.length
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

  /** Keeps (a copy of) the start of a selected line that goes on in the next chunk. */
  #append(piece: Buffer): void {
    const room = this.#keep - this.#headLength
    if (room > 0 && piece.length > 0) {
      const kept = Buffer.from(piece.subarray(0, room))
      this.#head.push(kept)
      this.#headLength += kept.length
    }
    this.#length += piece.length
  }

  /** Ends the line in progress; `tail` is its last piece, still in the caller's chunk (decoded from there, not copied). */
  #finishLine(tail: Buffer = EMPTY): void {
    if (this.#selecting()) {
      const length = this.#length + tail.length
      let line = tail
      if (this.#head.length > 0) {
        this.#head.push(tail.subarray(0, Math.max(0, this.#keep - this.#headLength)))
        line = Buffer.concat(this.#head)
      }
      const { text, size } = shownLine(line, length, this.#keep, this.#limits.maxLineLength)
      const cost = size + (this.#lines.length > 0 ? 1 : 0)
      if (this.#lines.length > 0 && this.#bytes + cost > this.#limits.maxBytes) this.#truncatedByBytes = true
      else {
        this.#bytes += cost
        this.#lines.push({ number: this.#number, text })
      }
    }
    this.#number++
    this.#head = []
    this.#headLength = 0
    this.#length = 0
  }
}
