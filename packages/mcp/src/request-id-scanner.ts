/**
 * Finds the top-level `"id"` and `"method"` of a JSON-RPC message streamed in
 * chunks, without keeping the message: what the stdio transport needs to answer
 * a message too large to buffer. Clients put `id` anywhere (the SDK's own
 * client puts it last, after `params`), so a prefix is not enough.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
/** Longer than any key we look for (`method`), so a longer key never matches. */
const KEY_KEEP = 7
/** An `id` value longer than this (raw) is not one a client would send; it is ignored. */
const ID_KEEP = 256

/** The JSON-RPC request id type: a string or an integer. */
export type RequestId = string | number

/**
 * A byte-level JSON scanner of one message: feed it every byte in order, then
 * read {@link id} and {@link hasMethod}. It tracks strings, escapes and nesting
 * depth only; it does not validate. Memory: a few hundred bytes, whatever the
 * message size.
 */
export class RequestIdScanner {
  #depth = 0
  #inString = false
  #escaped = false
  #topIsObject = false
  /** At depth 1 of the top-level object, the next string is a member name. */
  #expectKey = false
  /** The bytes of the depth-1 member name being read (up to KEY_KEEP), or undefined. */
  #key: number[] | undefined
  #lastKey = ''
  /** The raw bytes of the `id` value being read, or undefined. */
  #value: number[] | undefined
  #id: RequestId | undefined
  #hasMethod = false

  /** The last top-level `id` seen with a valid request id value (a string or a safe integer). */
  get id(): RequestId | undefined {
    return this.#id
  }

  /** Whether the top-level object has a `method` member: a request or a notification, not a response. */
  get hasMethod(): boolean {
    return this.#hasMethod
  }

  /** Scans the next bytes of the message. */
  write(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      if (this.#inString && this.#key === undefined && this.#value === undefined) {
        i = this.#skipString(bytes, i)
        if (i === bytes.length) return
      }
      const b = bytes[i] as number
      if (this.#value !== undefined && !this.#endsValue(b)) this.#keepValueByte(b)
      if (this.#inString) this.#stringByte(b)
      else this.#structuralByte(b)
    }
  }

  /** The index of the next byte of `bytes` from `i` that ends the string (its closing quote), or `bytes.length`: the hot loop of a large message. */
  #skipString(bytes: Uint8Array, i: number): number {
    let escaped = this.#escaped
    for (; i < bytes.length; i++) {
      const b = bytes[i]
      if (escaped) escaped = false
      else if (b === BACKSLASH) escaped = true
      else if (b === QUOTE) break
    }
    this.#escaped = escaped
    return i
  }

  #stringByte(b: number): void {
    if (this.#escaped) this.#escaped = false
    else if (b === BACKSLASH) this.#escaped = true
    else if (b === QUOTE) {
      this.#inString = false
      if (this.#key !== undefined) {
        this.#lastKey = String.fromCharCode(...this.#key)
        this.#key = undefined
        if (this.#lastKey === 'method') this.#hasMethod = true
      }
      return
    }
    if (this.#key !== undefined && this.#key.length < KEY_KEEP) this.#key.push(b)
  }

  #structuralByte(b: number): void {
    switch (b) {
      case QUOTE:
        this.#inString = true
        if (this.#depth === 1 && this.#expectKey) {
          this.#key = []
          this.#expectKey = false
        }
        return
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        this.#depth++
        if (this.#depth === 1) {
          this.#topIsObject = b === OPEN_OBJECT
          this.#expectKey = this.#topIsObject
        }
        return
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        this.#depth--
        return
      case COMMA:
        if (this.#depth === 1) this.#expectKey = this.#topIsObject
        return
      case COLON:
        if (this.#depth === 1 && this.#lastKey === 'id') this.#value = []
        this.#lastKey = ''
        return
    }
  }

  /** Whether `b` ends the `id` value being read (a `,` or `}` of the top-level object); if so, records the value. */
  #endsValue(b: number): boolean {
    if (this.#inString || this.#depth !== 1 || (b !== COMMA && b !== CLOSE_OBJECT)) return false
    const raw = this.#value
    this.#value = undefined
    if (raw === undefined || raw.length > ID_KEEP) return true
    try {
      const value: unknown = JSON.parse(Buffer.from(raw).toString('utf8'))
      if (typeof value === 'string' || Number.isSafeInteger(value)) this.#id = value as RequestId
    } catch {
      // Not a JSON value: no id.
    }
    return true
  }

  #keepValueByte(b: number): void {
    const raw = this.#value
    if (raw !== undefined && raw.length <= ID_KEEP) raw.push(b)
  }
}
