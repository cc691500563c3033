/**
 * The MCP stdio transport of `serveStdio`: newline-delimited JSON-RPC with a
 * byte cap per incoming message that fails cleanly.
 *
 * Why not the SDK's `StdioServerTransport`: its `ReadBuffer` throws once a line
 * passes 10 MiB (`ReadBuffer exceeded maximum size`), and the transport answers
 * that by closing itself, so the server ends without a reply, and (with no
 * `onerror` set) without a word. A line that is not JSON or not JSON-RPC is
 * dropped with no reply either.
 */
import process from 'node:process'
import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { RequestIdScanner, type RequestId } from './request-id-scanner.js'

/**
 * Default {@link StdioTransportOptions.maxMessageBytes}: 4 MiB. The tools' own
 * arguments are paths, patterns and at most one file's text; a model writes far
 * less than this in one call (its output is bounded by its token budget), and
 * JSON escaping leaves room to spare.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

/** JSON-RPC's "Parse error": the line is not JSON. */
export const PARSE_ERROR = -32700
/** JSON-RPC's "Invalid Request": not a JSON-RPC message, or over the size limit. */
export const INVALID_REQUEST = -32600

const NEWLINE = 0x0a

/** Options of {@link BoundedStdioTransport}. */
export interface StdioTransportOptions {
  /** The largest incoming message, in bytes of its line (without the newline); default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  readonly maxMessageBytes?: number | undefined
  /** Where a message that was dropped is reported, one line each; default `process.stderr`. */
  readonly stderr?: Writable | undefined
}

/**
 * A server transport over a pair of streams, one JSON-RPC message per line.
 *
 * - A line over `maxMessageBytes` is discarded as it streams in, never held
 *   whole (memory stays bounded whatever its size). A request (its top-level
 *   `method` and `id` are found wherever they sit in the line) gets the error
 *   `-32600` naming the limit; a notification, or a line with no id, gets a
 *   line on `stderr`.
 * - A line that is not JSON gets `-32700` with `id: null`; JSON that is not a
 *   JSON-RPC message gets `-32600` (with its id when it has one). A malformed
 *   response (no `method`, a `result` or `error`) is never answered.
 * - Every dropped line is reported on `stderr`; the transport goes on serving.
 * - `send` resolves once the stream took the message, waiting for `drain`
 *   when it asks to.
 * - The connection closes when stdin ends or closes, stdout fails, or
 *   `close()` is called; `onclose` is called once.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined

  readonly #stdin: Readable
  readonly #stdout: Writable
  readonly #stderr: Writable
  readonly #max: number
  /** The chunks of the line in progress while it is under the limit. */
  #chunks: Buffer[] = []
  #size = 0
  /** Set while an oversized line is being discarded. */
  #scanner: RequestIdScanner | undefined
  #started = false
  #closed = false
  /** Set while stdout asked us to wait: every reply written meanwhile waits on it, and stdin is paused. */
  #drained: Promise<void> | undefined

  constructor(stdin: Readable, stdout: Writable, options: StdioTransportOptions = {}) {
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    if (!Number.isSafeInteger(max) || max < 1) throw new TypeError(`maxMessageBytes must be a positive integer, got ${String(max)}`)
    this.#stdin = stdin
    this.#stdout = stdout
    this.#stderr = options.stderr ?? process.stderr
    this.#max = max
  }

  /** Starts reading stdin; `Server.connect` calls it. */
  async start(): Promise<void> {
    if (this.#started) throw new Error('BoundedStdioTransport already started')
    this.#started = true
    this.#stdin.on('data', this.#onData)
    this.#stdin.on('error', this.#onError)
    this.#stdin.once('end', this.#hangUp)
    this.#stdin.once('close', this.#hangUp)
    this.#stdout.on('error', this.#onStdoutError)
    if (this.#stdin.readableEnded || this.#stdin.destroyed) void this.close()
  }

  /**
   * Writes one message and its newline; resolves when stdout took it. When
   * stdout asks to wait, this resolves on `drain`, and stdin is paused until
   * then, so a client that does not read cannot make replies pile up.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('transport closed'))
    if (this.#stdout.write(`${JSON.stringify(message)}\n`, (err) => err && this.onerror?.(err))) return Promise.resolve()
    return this.#drain()
  }

  /**
   * One wait for `drain` shared by every message written meanwhile (one listener pair, however many
   * replies are in flight), with stdin paused until then.
   */
  #drain(): Promise<void> {
    this.#drained ??= new Promise<void>((resolve, reject) => {
      const stdout = this.#stdout
      const settle = (err?: Error): void => {
        stdout.off('drain', onDrain)
        stdout.off('close', onClose)
        this.#drained = undefined
        if (!this.#closed) this.#stdin.resume()
        if (err === undefined) resolve()
        else reject(err)
      }
      const onDrain = (): void => settle()
      const onClose = (): void => settle(new Error('stdout closed'))
      stdout.once('drain', onDrain)
      stdout.once('close', onClose)
      this.#stdin.pause()
    })
    return this.#drained
  }

  /** Stops reading (stdin is paused unless someone else reads it) and calls `onclose`, once. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#stdin.off('data', this.#onData)
    this.#stdin.off('error', this.#onError)
    this.#stdin.off('end', this.#hangUp)
    this.#stdin.off('close', this.#hangUp)
    this.#stdout.off('error', this.#onStdoutError)
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause()
    this.#chunks = []
    this.#scanner = undefined
    this.onclose?.()
  }

  readonly #hangUp = (): void => void this.close()
  readonly #onError = (error: Error): void => this.onerror?.(error)
  readonly #onStdoutError = (error: Error): void => {
    this.onerror?.(error)
    void this.close()
  }

  readonly #onData = (chunk: Buffer | string): void => {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    while (!this.#closed) {
      const end = bytes.indexOf(NEWLINE)
      const part = end === -1 ? bytes : bytes.subarray(0, end)
      this.#take(part)
      if (end === -1) return
      this.#endLine()
      bytes = bytes.subarray(end + 1)
    }
  }

  /** Adds bytes to the line in progress, switching to discarding once it passes the limit. */
  #take(part: Buffer): void {
    this.#size += part.length
    if (this.#scanner !== undefined) {
      this.#scanner.write(part)
      return
    }
    if (this.#size <= this.#max) {
      if (part.length > 0) this.#chunks.push(part)
      return
    }
    const scanner = new RequestIdScanner()
    for (const kept of this.#chunks) scanner.write(kept)
    scanner.write(part)
    this.#chunks = []
    this.#scanner = scanner
  }

  #endLine(): void {
    const size = this.#size
    const scanner = this.#scanner
    const chunks = this.#chunks
    this.#chunks = []
    this.#size = 0
    this.#scanner = undefined
    if (scanner !== undefined) return this.#refuseOversized(size, scanner)
    const line = Buffer.concat(chunks, size).toString('utf8')
    if (line.trim() !== '') this.#deliver(line)
  }

  #refuseOversized(size: number, scanner: RequestIdScanner): void {
    const what = `a message of ${size} bytes over the limit of ${this.#max} bytes (maxMessageBytes)`
    const id = scanner.hasMethod ? scanner.id : undefined
    if (id === undefined) return this.#report(`dropped ${what}; no request id found, so no reply was sent`)
    this.#report(`dropped ${what}; answered request ${JSON.stringify(id)} with error ${INVALID_REQUEST}`)
    const message = `Request too large: ${size} bytes, over this server's limit of ${this.#max} bytes per message; it was not read. Send a smaller request.`
    this.#reply(id, INVALID_REQUEST, message, { messageBytes: size, maxMessageBytes: this.#max })
  }

  #deliver(line: string): void {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err)
      this.#report(`dropped a line of ${Buffer.byteLength(line)} bytes that is not JSON (${reason}); answered with error ${PARSE_ERROR}`)
      return this.#reply(null, PARSE_ERROR, `Parse error: the message is not valid JSON (${reason})`)
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (parsed.success) {
      try {
        return this.onmessage?.(parsed.data)
      } catch (err) {
        // The SDK may throw on a message it cannot handle (e.g. JSON.stringify of a response nested
        // thousands deep, for an unknown id): one bad message must not end the server.
        return this.#report(`dropped a message the server could not handle (${err instanceof Error ? err.message : String(err)})`)
      }
    }
    const fields = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
    if (!('method' in fields) && ('result' in fields || 'error' in fields)) return this.#report('dropped a malformed JSON-RPC response')
    const id = typeof fields['id'] === 'string' || Number.isSafeInteger(fields['id']) ? (fields['id'] as RequestId) : null
    this.#report(`dropped JSON that is not a JSON-RPC message; answered with error ${INVALID_REQUEST}`)
    this.#reply(id, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 request or notification')
  }

  /** A JSON-RPC error response written by the transport itself: the server never saw the message. */
  #reply(id: RequestId | null, code: number, message: string, data?: Record<string, number>): void {
    const error = data === undefined ? { code, message } : { code, message, data }
    // `id: null` is JSON-RPC's answer when the id cannot be read; the SDK's types have no null id.
    this.send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage).catch((err: unknown) =>
      this.onerror?.(err instanceof Error ? err : new Error(String(err))),
    )
  }

  #report(line: string): void {
    this.#stderr.write(`seamfs mcp: ${line}\n`)
  }
}
