/**
 * A TCP proxy on 127.0.0.1 between the S3 client and the server, for fault injection: armed,
 * it cuts a connection (both sockets destroyed) once a request's upload, or a response's
 * download, has passed a given number of bytes (a fixed rule, or a random point per request);
 * frozen, it forwards nothing in either direction, the sockets kept open, until thawed.
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

/**
 * Cuts at random points: each request with one of `methods` (default: any; and whose target
 * contains `targetIncludes`) is cut with probability `chance`, half of them on the way up after a random number of bytes below
 * `maxUpBytes` (the server never gets the whole request, unless it is shorter), half on the way
 * down before the first byte of the answer (the server has applied the request, and its answer is
 * lost).
 */
export interface RandomCuts {
  readonly methods?: readonly string[]
  readonly targetIncludes?: string
  readonly chance: number
  readonly maxUpBytes: number
}

/** Where one request is cut. */
interface CutPoint {
  readonly direction: 'up' | 'down'
  readonly afterBytes: number
}

/** A cut that happened: the request it cut, and where. */
export interface Cut {
  readonly method: string
  readonly target: string
  readonly direction: 'up' | 'down'
}

/** What {@link CuttingProxy.freeze} holds: every request, or only those with `method` (and their answers). */
export interface FreezeRule {
  readonly method?: string
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/

export class CuttingProxy {
  readonly port: number
  /** Connections cut so far. */
  cuts = 0
  /** Every cut so far, in order. */
  readonly log: Cut[] = []
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  /** The thaw of each open connection: replays what it held. */
  readonly #thaws = new Set<() => void>()
  #rule: CutRule | undefined
  #random: RandomCuts | undefined
  #left = Infinity
  #frozen: FreezeRule | undefined

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
    this.#random = undefined
    this.#rule = rule
    this.#left = rule.times ?? Infinity
  }

  /** Cuts requests at random points (see {@link RandomCuts}) until `disarm()`; decided per request as it starts. */
  armRandom(cuts: RandomCuts): void {
    this.#rule = undefined
    this.#random = cuts
  }

  disarm(): void {
    this.#rule = undefined
    this.#random = undefined
  }

  /**
   * Stops forwarding: every byte that arrives (from either side, on open connections and new
   * ones) is held, nothing is sent on, no socket is closed. With `method`, only the connections
   * whose current request has that method are held.
   */
  freeze(rule: FreezeRule = {}): void {
    this.#frozen = rule
  }

  /** Forwards again: what was held goes on, in order, then everything else as it comes. */
  thaw(): void {
    this.#frozen = undefined
    for (const thaw of [...this.#thaws]) thaw()
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  /** The cut point of a request that starts now, under the random rule. */
  #pick(method: string, target: string): CutPoint | undefined {
    const cuts = this.#random
    if (cuts === undefined || (cuts.methods !== undefined && !cuts.methods.includes(method))) return undefined
    if (cuts.targetIncludes !== undefined && !target.includes(cuts.targetIncludes)) return undefined
    if (Math.random() >= cuts.chance) return undefined
    return Math.random() < 0.5 ? { direction: 'up', afterBytes: Math.floor(Math.random() * cuts.maxUpBytes) } : { direction: 'down', afterBytes: 0 }
  }

  #pipe(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1')
    this.#sockets.add(client).add(upstream)
    let method = ''
    let target = ''
    let point: CutPoint | undefined
    let upBytes = 0
    let downBytes = 0
    let dead = false
    const held: { readonly up: boolean; readonly chunk: Buffer }[] = []
    const cut = (): void => {
      client.destroy()
      upstream.destroy()
    }
    /** Decides the cut now (so later data is dropped); the sockets go once the allowed part is written. */
    const cutAfter = (socket: Socket, part: Buffer, direction: 'up' | 'down'): void => {
      dead = true
      this.cuts++
      this.log.push({ method, target, direction })
      if (this.#rule !== undefined && --this.#left <= 0) this.#rule = undefined
      if (part.byteLength > 0) socket.write(part, cut)
      else cut()
    }
    const limitOf = (direction: 'up' | 'down'): number | undefined => {
      if (point !== undefined) return point.direction === direction ? point.afterBytes : undefined
      const rule = this.#rule
      return rule !== undefined && rule.direction === direction && (rule.method === undefined || rule.method === method) ? rule.afterBytes : undefined
    }
    const frozenFor = (requestMethod: string): boolean => {
      const rule = this.#frozen
      return rule !== undefined && (rule.method === undefined || rule.method === requestMethod)
    }
    const up = (chunk: Buffer): void => {
      if (dead) return
      const line = REQUEST_LINE.exec(chunk.subarray(0, 4096).toString('latin1'))
      if (line !== null) {
        method = line[1] ?? ''
        target = line[2] ?? ''
        point = this.#pick(method, target)
        upBytes = 0
        downBytes = 0
      }
      upBytes += chunk.byteLength
      const limit = limitOf('up')
      if (limit !== undefined && upBytes > limit) {
        // Let the request through up to the limit, then cut in the middle of it.
        cutAfter(upstream, chunk.subarray(0, Math.max(0, chunk.byteLength - (upBytes - limit))), 'up')
        return
      }
      upstream.write(chunk)
    }
    const down = (chunk: Buffer): void => {
      if (dead) return
      downBytes += chunk.byteLength
      const limit = limitOf('down')
      if (limit !== undefined && downBytes > limit) {
        cutAfter(client, chunk.subarray(0, Math.max(0, chunk.byteLength - (downBytes - limit))), 'down')
        return
      }
      client.write(chunk)
    }
    /** Held while frozen (for this request's method), or while older chunks are still held: order is kept. */
    const holds = (chunk: Buffer, isUp: boolean): boolean => {
      const next = isUp ? (REQUEST_LINE.exec(chunk.subarray(0, 4096).toString('latin1'))?.[1] ?? method) : method
      if (held.length === 0 && !frozenFor(next)) return false
      held.push({ up: isUp, chunk })
      return true
    }
    const thaw = (): void => {
      while (held.length > 0 && !dead) {
        const next = held[0]
        if (next === undefined || frozenFor(next.up ? (REQUEST_LINE.exec(next.chunk.subarray(0, 4096).toString('latin1'))?.[1] ?? method) : method)) return
        held.shift()
        if (next.up) up(next.chunk)
        else down(next.chunk)
      }
    }
    this.#thaws.add(thaw)
    client.on('data', (chunk: Buffer) => {
      if (!holds(chunk, true)) up(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!holds(chunk, false)) down(chunk)
    })
    const close = (): void => {
      client.destroy()
      upstream.destroy()
      held.length = 0
      this.#thaws.delete(thaw)
      this.#sockets.delete(client)
      this.#sockets.delete(upstream)
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  }
}
