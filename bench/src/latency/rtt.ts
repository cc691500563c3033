/**
 * The round-trip time a {@link LatencyProxy} really adds at a given delay: a byte sent to an
 * echo server on 127.0.0.1 behind its own proxy, and back, timed on an open connection. It is the
 * delay each way plus what the proxy's timers add; the latency tables divide by it.
 */
import { connect, createServer, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { LatencyProxy } from './proxy.js'

const PINGS = 9

/** The median time (ms) of a one-byte echo through a proxy delaying `delayMs` each way. */
export async function measureRtt(delayMs: number): Promise<number> {
  const echo = createServer((socket) => {
    socket.on('error', () => undefined)
    socket.pipe(socket)
  })
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
  const address = echo.address()
  if (typeof address !== 'object' || address === null) throw new Error('echo server: no port')
  const proxy = await LatencyProxy.start({ host: '127.0.0.1', port: address.port })
  proxy.delayMs = delayMs
  let socket: Socket | undefined
  try {
    socket = connect({ host: '127.0.0.1', port: proxy.port, noDelay: true })
    const open = socket
    await new Promise<void>((resolve, reject) => open.once('connect', resolve).once('error', reject))
    const times: number[] = []
    // The first ping also pays the proxy's handshake rule; it is not counted.
    for (let i = 0; i <= PINGS; i++) {
      const start = performance.now()
      await new Promise<void>((resolve) => {
        open.once('data', () => resolve())
        open.write('x')
      })
      if (i > 0) times.push(performance.now() - start)
    }
    return times.sort((a, b) => a - b)[PINGS >> 1] as number
  } finally {
    socket?.destroy()
    await proxy.close()
    await new Promise<void>((resolve) => echo.close(() => resolve()))
  }
}
