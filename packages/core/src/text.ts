import { Buffer, isAscii, isUtf8 } from 'node:buffer'
import { FsError } from './errors.js'

/** How many leading bytes are searched for a NUL to call a file binary. */
export const BINARY_SAMPLE_BYTES = 8192

/** The UTF-8 byte order mark. */
export const UTF8_BOM: Uint8Array = Uint8Array.of(0xef, 0xbb, 0xbf)

/** Verbs a text failure is reported under. */
export type TextVerb = 'read' | 'edit' | 'write'

/** True when `bytes` starts with a UTF-8 BOM. */
export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
}

/** True when a NUL byte occurs in the first {@link BINARY_SAMPLE_BYTES} bytes. */
export function hasNulInSample(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SAMPLE_BYTES)
  return bytes.subarray(0, end).indexOf(0) !== -1
}

function binaryError(verb: TextVerb, path: string): FsError {
  return FsError.at('FS_NOT_TEXT', verb, path, 'binary file')
}

function invalidUtf8Error(verb: TextVerb, path: string, cause: unknown): FsError {
  return FsError.at('FS_NOT_TEXT', verb, path, 'invalid UTF-8 text', { cause })
}

/** A `Buffer` view of `bytes`, for Node's byte search and decoders (no copy). */
export const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))

/**
 * Refuses what is not text: a NUL in the sample, or invalid UTF-8 anywhere (also a truncated
 * last sequence), is `FS_NOT_TEXT`. Validation is simdutf's (`isUtf8`): exactly what a fatal
 * `TextDecoder` accepts, without building the string.
 */
export function assertText(bytes: Uint8Array, path: string, verb: TextVerb): void {
  if (hasNulInSample(bytes)) throw binaryError(verb, path)
  if (!isUtf8(bytes)) throw invalidUtf8Error(verb, path, new TypeError('invalid UTF-8 sequence'))
}

/**
 * {@link assertText} a slice of at most `sliceBytes` at a time, yielding between slices, for a
 * caller that must not hold the thread for a whole large file (the edit engine). Slices end on a
 * character boundary, so the answer is exactly {@link assertText}'s.
 */
export function* assertTextSteps(bytes: Uint8Array, path: string, verb: TextVerb, sliceBytes: number): Generator<void, void, void> {
  if (hasNulInSample(bytes)) throw binaryError(verb, path)
  for (let at = 0; at < bytes.length;) {
    let end = Math.min(at + sliceBytes, bytes.length)
    // On to the end of the character: at most 3 continuation bytes (more is invalid, and the next slice says so).
    for (let on = 0; on < 3 && end < bytes.length && ((bytes[end] as number) & 0xc0) === 0x80; on++) end++
    if (!isUtf8(bytes.subarray(at, end))) throw invalidUtf8Error(verb, path, new TypeError('invalid UTF-8 sequence'))
    at = end
    if (at < bytes.length) yield
  }
}

/** From this size on, {@link textOf} checks for ASCII first: below it the check costs more than it saves. */
const ASCII_CHECK_BYTES = 4096

/**
 * The text of valid UTF-8 `bytes` from byte `start` on, every U+FEFF kept (the caller skips
 * the BOM by `start`). A large ASCII text, the common case, is copied as Latin-1: the same
 * string, several times faster than decoding it.
 */
export function textOf(bytes: Uint8Array, start = 0): string {
  const body = start === 0 ? asBuffer(bytes) : asBuffer(bytes).subarray(start)
  // `toString()` without arguments is Node's shortest way to the UTF-8 decoder.
  return body.length >= ASCII_CHECK_BYTES && isAscii(body) ? body.toString('latin1') : body.toString()
}

/**
 * Decodes a whole file strictly: a NUL in the sample or any invalid sequence is
 * `FS_NOT_TEXT`; a leading BOM is dropped.
 */
export function decodeText(bytes: Uint8Array, path: string, verb: TextVerb = 'read'): string {
  assertText(bytes, path, verb)
  try {
    return textOf(bytes, hasUtf8Bom(bytes) ? 3 : 0)
  } catch (err) {
    // Valid text that is merely too long for one string is not "not text".
    if ((err as { code?: unknown } | null)?.code === 'ERR_STRING_TOO_LONG') {
      throw FsError.at('FS_TOO_LARGE', verb, path, 'text too large to hold as one string', { cause: err })
    }
    throw err
  }
}

/** True when `bytes` are text as the contract reads it: valid UTF-8, no NUL in the sample. */
export function isText(bytes: Uint8Array): boolean {
  return !hasNulInSample(bytes) && isUtf8(bytes)
}

/** Like {@link decodeText}, but `null` instead of an error (for diff bases). */
export function decodeTextOrNull(bytes: Uint8Array): string | null {
  if (!isText(bytes)) return null
  try {
    return textOf(bytes, hasUtf8Bom(bytes) ? 3 : 0)
  } catch {
    return null
  }
}

/** Bytes (from the end of `bytes`) of a multi-byte character that is not complete yet: 0 to 3. */
export function incompleteTail(bytes: Uint8Array): number {
  const n = bytes.length
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const b = bytes[i] as number
    if (b < 0x80) return 0
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
      return i + need > n ? n - i : 0
    }
  }
  // Only continuation bytes: invalid, which validation reports.
  return 0
}

/**
 * The checks of a strict streamed read, on bytes, without decoding: the NUL sample spans
 * chunks, a character split across chunks is joined, every byte is validated (simdutf's
 * `isUtf8`), {@link TextChunkValidator.end} rejects a truncated trailing sequence, and a leading
 * BOM (even split) is dropped. {@link TextChunkDecoder} is this plus Node's decoder; a reader
 * that decodes only part of a stream (the read tool's line window) takes the valid bytes as
 * they are, under the same rules and with the same failures.
 */
export class TextChunkValidator {
  readonly #path: string
  readonly #verb: TextVerb
  #sampled = 0
  #carry: Uint8Array = new Uint8Array(0)
  #started = false
  /**
   * Invalid UTF-8 found before the NUL sample was complete: told once the sample is (a NUL in it
   * is told instead), so that the failure is the one `readText` gives the whole file, whatever the
   * chunk sizes. Nothing more is handed on meanwhile.
   */
  #invalid: FsError | undefined

  constructor(path: string, verb: TextVerb = 'read') {
    this.#path = path
    this.#verb = verb
  }

  /**
   * Checks the next chunk and hands `take` the complete characters it finished, in order (the
   * joined bytes of a character the previous chunk cut, then the rest), never an empty piece.
   * A piece may be a view into `chunk`: it is `take`'s only during the call.
   */
  push(chunk: Uint8Array, take: (valid: Uint8Array) => void): void {
    if (this.#sampled < BINARY_SAMPLE_BYTES) {
      const n = Math.min(chunk.length, BINARY_SAMPLE_BYTES - this.#sampled)
      if (chunk.subarray(0, n).indexOf(0) !== -1) throw binaryError(this.#verb, this.#path)
      this.#sampled += n
    }
    if (this.#invalid !== undefined) {
      if (this.#sampled >= BINARY_SAMPLE_BYTES) throw this.#invalid
      return
    }
    let body = chunk
    if (this.#carry.length > 0) {
      // Finish the character the previous chunk cut: only its few bytes are copied.
      const lead = this.#carry[0] as number
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
      const more = Math.min(need - this.#carry.length, chunk.length)
      const joined = new Uint8Array(this.#carry.length + more)
      joined.set(this.#carry, 0)
      joined.set(chunk.subarray(0, more), this.#carry.length)
      body = chunk.subarray(more)
      if (joined.length < need) {
        this.#carry = joined
        return
      }
      this.#carry = new Uint8Array(0)
      if (!this.#hand(joined, take)) return
    }
    const tail = incompleteTail(body)
    // A copy: the caller may reuse its buffer (and Buffer#slice would not copy).
    if (tail > 0) this.#carry = Uint8Array.from(body.subarray(body.length - tail))
    this.#hand(body.subarray(0, body.length - tail), take)
  }

  /** Ends the stream; a dangling partial sequence is `FS_NOT_TEXT`. */
  end(): void {
    if (this.#invalid !== undefined) throw this.#invalid
    if (this.#carry.length > 0) throw invalidUtf8Error(this.#verb, this.#path, new TypeError('truncated UTF-8 sequence'))
  }

  /** Hands `bytes` on if they are valid UTF-8; false when they are not and the NUL sample is still open. */
  #hand(bytes: Uint8Array, take: (valid: Uint8Array) => void): boolean {
    if (bytes.length === 0) return true
    if (!isUtf8(bytes)) {
      const invalid = invalidUtf8Error(this.#verb, this.#path, new TypeError('invalid UTF-8 sequence'))
      if (this.#sampled >= BINARY_SAMPLE_BYTES) throw invalid
      this.#invalid = invalid
      this.#carry = new Uint8Array(0)
      return false
    }
    let valid = bytes
    if (!this.#started) {
      this.#started = true
      // Complete characters: a leading U+FEFF is exactly these three bytes.
      if (hasUtf8Bom(valid)) valid = valid.subarray(3)
    }
    if (valid.length > 0) take(valid)
    return true
  }
}

/**
 * Incremental strict decoder for streamed reads: {@link TextChunkValidator}'s checks (the NUL
 * sample spans chunks, a character split across chunks is joined, {@link end} rejects a
 * truncated trailing sequence, a leading BOM, even split, is dropped), then Node's own decoder
 * on the complete characters of each chunk. That is what a fatal TextDecoder does, an order of
 * magnitude faster on large files.
 */
export class TextChunkDecoder {
  readonly #checks: TextChunkValidator
  #text = ''
  readonly #decode = (valid: Uint8Array): void => {
    this.#text += asBuffer(valid).toString('utf8')
  }

  constructor(path: string, verb: TextVerb = 'read') {
    this.#checks = new TextChunkValidator(path, verb)
  }

  /** Decodes the next chunk; returns the complete characters it finished. */
  push(chunk: Uint8Array): string {
    this.#text = ''
    this.#checks.push(chunk, this.#decode)
    const text = this.#text
    this.#text = ''
    return text
  }

  /** Flushes; a dangling partial sequence is `FS_NOT_TEXT`. */
  end(): string {
    this.#checks.end()
    return ''
  }
}

/**
 * Decodes a byte stream into text chunks with {@link TextChunkDecoder},
 * checking `signal` between chunks. Empty chunks are not yielded.
 */
export async function* decodeTextStream(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  path: string,
  signal?: AbortSignal,
): AsyncGenerator<string, void, undefined> {
  const decoder = new TextChunkDecoder(path)
  for await (const chunk of chunks) {
    if (signal?.aborted === true) throw FsError.aborted('read', signal.reason)
    const text = decoder.push(chunk)
    if (text !== '') yield text
  }
  const tail = decoder.end()
  if (tail !== '') yield tail
}

/** A line ending seamfs restores. A lone `\r` is never treated as one. */
export type LineEnding = '\n' | '\r\n'

/**
 * Characters {@link normalizeLf} replaces at a time: V8's `replaceAll` builds its result as one
 * string piece per match, so over a text of tens of millions of CRLFs it exhausts the heap.
 * Chunks are split and joined instead (a join leaves one flat string).
 */
const NORMALIZE_CHUNK = 1 << 20

/** Replaces every CRLF by LF; lone CRs stay. */
export function normalizeLf(text: string): string {
  if (text.indexOf('\r\n') === -1) return text
  if (text.length <= NORMALIZE_CHUNK) return text.split('\r\n').join('\n')
  const parts: string[] = []
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + NORMALIZE_CHUNK, text.length)
    // A chunk never ends between the CR and the LF of one CRLF.
    if (text.charCodeAt(end - 1) === 13 && text.charCodeAt(end) === 10) end++
    parts.push(text.slice(at, end).split('\r\n').join('\n'))
    at = end
  }
  return parts.join('')
}

/** How many leading characters {@link detectLineEnding} looks at. */
export const LINE_ENDING_SAMPLE_CHARS = 4096

/** The dominant line ending of the first 4096 characters: CRLF only on a strict majority. */
export function detectLineEnding(text: string): LineEnding {
  const sample = text.length > LINE_ENDING_SAMPLE_CHARS ? text.slice(0, LINE_ENDING_SAMPLE_CHARS) : text
  let crlf = 0
  let lf = 0
  for (let i = sample.indexOf('\n'); i !== -1; i = sample.indexOf('\n', i + 1)) {
    if (i > 0 && sample.charCodeAt(i - 1) === 13) crlf++
    else lf++
  }
  return crlf > lf ? '\r\n' : '\n'
}

/** Turns LF-normalized text into text with `eol` line endings. */
export function applyLineEnding(lfText: string, eol: LineEnding): string {
  return eol === '\n' ? lfText : lfText.replaceAll('\n', '\r\n')
}

/**
 * UTF-8 bytes of `text`, with a BOM in front when `bom` is set. Node's own encoder into a `Buffer`:
 * a small text lands in Node's shared pool, where a `TextEncoder` would give each call an
 * `ArrayBuffer` of its own (several times the cost of the encoding itself). The result is a view
 * (`byteOffset` may be non-zero): read it through its own offset and length, never its `buffer`.
 */
export function encodeText(text: string, bom = false): Uint8Array {
  if (!bom) return Buffer.from(text, 'utf8')
  const out = Buffer.allocUnsafe(Buffer.byteLength(text, 'utf8') + 3)
  out.set(UTF8_BOM, 0)
  out.write(text, 3, 'utf8')
  return out
}

/**
 * Validates and encodes the content of a write: a non-string, or a string with
 * a lone surrogate (which has no UTF-8 form), is `FS_NOT_TEXT`, so nothing is
 * silently replaced by U+FFFD; content of more than `maxBytes` UTF-8 bytes is
 * `FS_TOO_LARGE`, counted before anything is encoded (a string of hundreds of
 * MiB is refused without its bytes ever being held). The bytes are encoded as
 * {@link encodeText} does.
 */
export function encodeWriteContent(content: unknown, path: string, maxBytes = Number.POSITIVE_INFINITY): Uint8Array {
  if (typeof content !== 'string') {
    throw FsError.at('FS_NOT_TEXT', 'write', path, 'content must be a string')
  }
  if (!content.isWellFormed()) {
    throw FsError.at('FS_NOT_TEXT', 'write', path, 'content has a lone surrogate (not valid Unicode)')
  }
  // Every UTF-16 unit is at least one UTF-8 byte: a longer string is too large whatever it holds.
  if (content.length > maxBytes || Buffer.byteLength(content, 'utf8') > maxBytes) {
    throw FsError.tooLarge('write', path, Buffer.byteLength(content, 'utf8'), maxBytes)
  }
  return Buffer.from(content, 'utf8')
}
