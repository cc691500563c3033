/**
 * A TCP proxy on 127.0.0.1 that adds a one-way delay each way and counts round trips.
 *
 * Each direction of each connection is a queue: a chunk is released at its arrival time plus
 * the delay, in arrival order (one timer per queue, never one per chunk, so nothing reorders).
 * A new connection pays one round trip for the TCP handshake: its first bytes reach the target
 * no earlier than accept + 3 × delay (SYN, SYN-ACK, then the data).
 *
 * Round trips are counted as the depth of the longest causal chain, a measure that does not
 * depend on the delay: a client→server chunk has depth 1 + the deepest server→client chunk
 * already delivered to the client (on any connection, since the client may wait on any of
 * them), a server→client chunk has the depth of the last client chunk delivered to the server
 * on that connection, and a handshake counts as one level. Requests sent together (pipelined,
 * or in flight on several connections) share a level; a chain of dependent requests adds one
 * level each. So at delay d, wall time ≈ round trips × 2d plus the work on loopback. It is an
 * upper bound: the proxy cannot tell which request a reply answers, so a message the client
 * sends without waiting for its reply (a CLOSE, a window adjust) still deepens the chain when
 * an earlier reply is delivered after it. It also depends on the delay: where the client's and
 * server's work between two replies is longer than the delay, requests a client sends together
 * at 50 ms leave in several flights at 10 ms, and count (and cost) that many levels.
 *
 * A measurement starts with {@link LatencyProxy.reset}; chunks still on their way from before it
 * (the answer to a request a call sent behind its result, such as a lock's release) are delivered
 * but count for nothing, so they cannot deepen the next measurement's chains. {@link
 * LatencyProxy.quiet} waits until nothing is on its way, so that they do not share its time either.
 */
import { createServer, connect, type Server, type Socket } from 'node:net'

/** What the proxy counted since the last {@link LatencyProxy.reset}. */
export interface ProxyCounts {
  /** Depth of the longest chain of dependent client→server flights (handshakes included). */
  readonly roundTrips: number
  /** TCP connections opened through the proxy. */
  readonly connections: number
  readonly bytesUp: number
  readonly bytesDown: number
}

interface Pending {
  readonly chunk: Buffer
  readonly at: number
  readonly depth: number
  /** The measurement it was sent in (see {@link LatencyProxy.reset}). */
  readonly epoch: number
}

/** One direction of one connection: chunks released in order at their due time. */
class DelayQueue {
  private readonly items: Pending[] = []
  private timer: NodeJS.Timeout | undefined
  private ended = false

  constructor(
    private readonly release: (item: Pending) => void,
    private readonly finish: () => void,
  ) {}

  push(item: Pending): void {
    this.items.push(item)
    this.schedule()
  }

  /** Chunks waiting for their time. */
  get size(): number {
    return this.items.length
  }

  /** Ends the far side once every queued chunk is released. */
  end(): void {
    this.ended = true
    this.schedule()
  }

  clear(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.items.length = 0
  }

  private schedule(): void {
    if (this.timer !== undefined) return
    const head = this.items[0]
    if (head === undefined) {
      if (this.ended) this.finish()
      return
    }
    this.timer = setTimeout(() => this.flush(), Math.max(0, head.at - performance.now()))
  }

  private flush(): void {
    this.timer = undefined
    const now = performance.now()
    while (this.items[0] !== undefined && this.items[0].at <= now) this.release(this.items.shift() as Pending)
    this.schedule()
  }
}

/** A delaying, counting TCP proxy in front of one target. */
export class LatencyProxy {
  /** One-way delay in ms; change it between measurements. */
  delayMs = 0
  private readonly server: Server
  private readonly sockets = new Set<Socket>()
  private readonly queues = new Set<DelayQueue>()
  /** Per connection: the depth of the last client chunk delivered upstream (zeroed by reset). */
  private readonly upDepths = new Map<Socket, { depth: number }>()
  private deliveredDown = 0
  private maxDepth = 0
  private epoch = 0
  private connections = 0
  private bytesUp = 0
  private bytesDown = 0

  private constructor(
    readonly target: { readonly host: string; readonly port: number },
    readonly port: number,
    server: Server,
  ) {
    this.server = server
  }

  /** Listens on a free port of 127.0.0.1 and forwards to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<LatencyProxy> {
    // Half-open: one side's end is forwarded after its queue drains; a socket closes when both sides ended.
    const server = createServer({ allowHalfOpen: true })
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        if (typeof address === 'object' && address !== null) resolve(address.port)
        else reject(new Error('proxy: no port'))
      })
    })
    server.unref()
    const proxy = new LatencyProxy(target, port, server)
    // Nobody knows the port before this returns, so no connection is missed.
    server.on('connection', (socket: Socket) => proxy.accept(socket))
    return proxy
  }

  /**
   * Starts a new measurement: counts and depths from zero (connections already open stay open);
   * chunks sent before are still delivered, but deepen nothing.
   */
  reset(): void {
    this.epoch++
    this.deliveredDown = 0
    this.maxDepth = 0
    for (const state of this.upDepths.values()) state.depth = 0
    this.connections = 0
    this.bytesUp = 0
    this.bytesDown = 0
  }

  /** Resolves once no chunk has been waiting in either direction for `quietMs` (polled every ms or so). */
  async quiet(quietMs = 5): Promise<void> {
    let since = performance.now()
    for (;;) {
      if ([...this.queues].some((queue) => queue.size > 0)) since = performance.now()
      else if (performance.now() - since >= quietMs) return
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }

  counts(): ProxyCounts {
    return { roundTrips: this.maxDepth, connections: this.connections, bytesUp: this.bytesUp, bytesDown: this.bytesDown }
  }

  /** Closes the listener and both sides of every connection. */
  async close(): Promise<void> {
    for (const queue of this.queues) queue.clear()
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private track(socket: Socket): void {
    this.sockets.add(socket)
    socket.setNoDelay(true)
    socket.once('close', () => this.sockets.delete(socket))
    socket.on('error', () => undefined)
  }

  private accept(client: Socket): void {
    const accepted = performance.now()
    const delay = this.delayMs
    this.connections++
    // The handshake is one level; data sent on this connection comes after it.
    const handshake = { depth: this.deliveredDown + 1 }
    this.maxDepth = Math.max(this.maxDepth, handshake.depth)
    const upDepth = { depth: handshake.depth }
    const upstream = connect({ host: this.target.host, port: this.target.port, allowHalfOpen: true })
    this.track(client)
    this.track(upstream)
    const up = new DelayQueue(
      (item) => {
        upDepth.depth = item.epoch === this.epoch ? item.depth : 0
        upstream.write(item.chunk)
      },
      () => upstream.end(),
    )
    const down = new DelayQueue(
      (item) => {
        if (item.epoch === this.epoch) this.deliveredDown = Math.max(this.deliveredDown, item.depth)
        client.write(item.chunk)
      },
      () => client.end(),
    )
    this.queues.add(up).add(down)
    this.upDepths.set(client, upDepth).set(upstream, handshake)
    client.on('data', (chunk: Buffer) => {
      this.bytesUp += chunk.length
      const depth = Math.max(this.deliveredDown, handshake.depth) + 1
      this.maxDepth = Math.max(this.maxDepth, depth)
      up.push({ chunk, at: Math.max(performance.now() + this.delayMs, accepted + 3 * delay), depth, epoch: this.epoch })
    })
    upstream.on('data', (chunk: Buffer) => {
      this.bytesDown += chunk.length
      down.push({ chunk, at: performance.now() + this.delayMs, depth: upDepth.depth, epoch: this.epoch })
    })
    client.once('end', () => up.end())
    upstream.once('end', () => down.end())
    const teardown = (): void => {
      up.clear()
      down.clear()
      this.queues.delete(up)
      this.queues.delete(down)
      this.upDepths.delete(client)
      this.upDepths.delete(upstream)
      client.destroy()
      upstream.destroy()
    }
    client.once('close', teardown)
    upstream.once('close', teardown)
  }
}
