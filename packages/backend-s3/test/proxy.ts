/**
 * A TCP proxy on 127.0.0.1 between the S3 client and the server, for fault injection: armed,
 * it cuts a connection (both sockets destroyed) once a request's upload, or a response's
 * download, has passed a given number of bytes.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'

export interface CutRule {
  /** `up`: client → server (the request, with its body); `down`: server → client. */
  readonly direction: 'up' | 'down'
  /** Bytes of the current request (or response) let through before the cut. */
  readonly afterBytes: number
  /** Only requests with this HTTP method (and their responses). */
  readonly method?: string
  /** How many cuts before the rule disarms itself (default: until `disarm()`). */
  readonly times?: number
}

const REQUEST_LINE = /^([A-Z]+) \S+ HTTP\/1\.1\r\n/

export class CuttingProxy {
  readonly port: number
  /** Connections cut so far. */
  cuts = 0
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  #rule: CutRule | undefined
  #left = Infinity

  private constructor(server: Server, port: number) {
    this.#server = server
    this.port = port
  }

  static async start(targetPort: number): Promise<CuttingProxy> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    if (typeof address !== 'object' || address === null) throw new Error('the proxy has no port')
    const proxy = new CuttingProxy(server, address.port)
    server.on('connection', (client: Socket) => proxy.#pipe(client, targetPort))
    return proxy
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`
  }

  arm(rule: CutRule): void {
    this.#rule = rule
    this.#left = rule.times ?? Infinity
  }

  disarm(): void {
    this.#rule = undefined
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #pipe(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1')
    this.#sockets.add(client).add(upstream)
    let method = ''
    let upBytes = 0
    let downBytes = 0
    let dead = false
    const cut = (): void => {
      client.destroy()
      upstream.destroy()
    }
    /** Decides the cut now (so later data is dropped); the sockets go once the allowed part is written. */
    const cutAfter = (socket: Socket, part: Buffer): void => {
      dead = true
      this.cuts++
      if (--this.#left <= 0) this.#rule = undefined
      if (part.byteLength > 0) socket.write(part, cut)
      else cut()
    }
    const matches = (direction: 'up' | 'down', bytes: number): boolean => {
      const rule = this.#rule
      return rule !== undefined && rule.direction === direction && (rule.method === undefined || rule.method === method) && bytes > rule.afterBytes
    }
    client.on('data', (chunk: Buffer) => {
      if (dead) return
      const line = REQUEST_LINE.exec(chunk.subarray(0, 4096).toString('latin1'))
      if (line !== null) {
        method = line[1] ?? ''
        upBytes = 0
        downBytes = 0
      }
      upBytes += chunk.byteLength
      if (matches('up', upBytes)) {
        // Let the request through up to the limit, then cut in the middle of it.
        cutAfter(upstream, chunk.subarray(0, Math.max(0, chunk.byteLength - (upBytes - (this.#rule?.afterBytes ?? 0)))))
        return
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (dead) return
      downBytes += chunk.byteLength
      if (matches('down', downBytes)) {
        cutAfter(client, chunk.subarray(0, Math.max(0, chunk.byteLength - (downBytes - (this.#rule?.afterBytes ?? 0)))))
        return
      }
      client.write(chunk)
    })
    const close = (): void => {
      client.destroy()
      upstream.destroy()
      this.#sockets.delete(client)
      this.#sockets.delete(upstream)
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  }
}
