import { createServer, connect, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'
import { RawSftp } from './raw.js'

/**
 * A TCP proxy on 127.0.0.1 in front of the SFTP server that can cut every
 * connection after a number of bytes in one direction: the network failing
 * in the middle of a transfer.
 */
export class CuttingProxy {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  #budget: { direction: 'up' | 'down'; bytes: number; each: number; times: number } | undefined
  /** Connections cut so far. */
  cuts = 0
  /** Connections accepted so far. */
  connections = 0

  private constructor(server: Server) {
    this.#server = server
  }

  static async start(targetPort: number): Promise<CuttingProxy> {
    const holder: { proxy?: CuttingProxy } = {}
    const server = createServer((client) => holder.proxy?.accept(client, targetPort))
    const proxy = (holder.proxy = new CuttingProxy(server))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return proxy
  }

  get port(): number {
    const address = this.#server.address()
    if (address === null || typeof address === 'string') throw new Error('proxy is not listening')
    return address.port
  }

  /** Cuts the connection once `bytes` more bytes went up (client → server) or down; `times` connections in a row, each after `bytes`. */
  cutAfter(direction: 'up' | 'down', bytes: number, times = 1): void {
    this.#budget = { direction, bytes, each: bytes, times }
  }

  /** Cuts every open connection now (an idle connection dropped by the network or a server restart). */
  cutAll(): void {
    for (const s of this.#sockets) s.destroy()
    this.cuts++
  }

  accept(client: Socket, targetPort: number): void {
    this.connections++
    const upstream = connect(targetPort, '127.0.0.1')
    for (const s of [client, upstream]) {
      this.#sockets.add(s)
      s.on('close', () => this.#sockets.delete(s))
      s.on('error', () => undefined)
    }
    const relay = (from: Socket, to: Socket, direction: 'up' | 'down'): void => {
      from.on('data', (chunk: Buffer) => {
        const budget = this.#budget
        if (budget !== undefined && budget.direction === direction) {
          budget.bytes -= chunk.length
          if (budget.bytes <= 0) {
            budget.times--
            budget.bytes = budget.each
            if (budget.times <= 0) this.#budget = undefined
            this.cuts++
            client.destroy()
            upstream.destroy()
            return
          }
        }
        to.write(chunk)
      })
      from.on('end', () => to.end())
    }
    relay(client, upstream, 'up')
    relay(upstream, client, 'down')
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }
}

/** What {@link suiteBehindProxy} hands a suite: the proxy, a raw connection past it, the suite's directory, a filesystem through the proxy. */
export interface ProxiedSuite {
  readonly proxy: CuttingProxy
  readonly raw: RawSftp
  readonly root: string
  readonly fs: SftpFileSystem
}

/**
 * Registers the hooks of a suite whose filesystem talks through a {@link CuttingProxy}: before it,
 * the proxy, a raw connection straight to the server, a fresh directory named `prefix…` and an
 * `SftpFileSystem` rooted there through the proxy (given to `ready`); after it, all of them closed
 * and the directory removed. Nothing happens without a server (the suite skips).
 */
export function suiteBehindProxy(server: SftpServerInfo | null, prefix: string, ready: (suite: ProxiedSuite) => void): void {
  let proxy: CuttingProxy | undefined
  let raw: RawSftp | undefined
  let root: string | undefined
  let fs: SftpFileSystem | undefined
  beforeAll(async () => {
    if (server === null) return
    proxy = await CuttingProxy.start(server.port)
    raw = await RawSftp.connect(server)
    root = await raw.freshDir(server.root, prefix)
    fs = new SftpFileSystem({ ...server, port: proxy.port, root })
    ready({ proxy, raw, root, fs })
  })
  afterAll(async () => {
    await fs?.close()
    if (root !== undefined) await raw?.rmrf(root)
    raw?.close()
    await proxy?.close()
  })
}
