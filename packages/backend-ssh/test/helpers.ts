import { Client } from 'ssh2'
import type { ConfigEnv, FileSystem } from '@seamfs/core/backend'
import { sftpBackend, type SftpConfig } from '@seamfs/backend-ssh/config'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'

/** Opens `config` as the CLI would and lists the root: undefined when that worked, else the error. */
export async function mountError(config: SftpConfig, env: ConfigEnv, baseDir: string): Promise<unknown> {
  let fs: FileSystem | undefined
  try {
    fs = await sftpBackend.open(config, env, baseDir)
    await fs.listDir(await fs.resolve('.'))
    return undefined
  } catch (err) {
    return err
  } finally {
    await fs?.close()
  }
}

/** The suite title, with the reason when there is no server (the suite then skips). */
export function titled(title: string, server: SftpServerInfo | null, why: string): string {
  return server === null ? `${title} (skipped: ${why})` : title
}

/** A connected ssh2 client that counts the SFTP requests it sends, by type (from ssh2's debug output). */
export interface CountingClient {
  readonly client: Client
  /** Requests sent since the last reset, by SFTP type (OPEN, READ, WRITE, posix-rename@openssh.com…). */
  readonly counts: Map<string, number>
  total(): number
  reset(): void
  /**
   * Runs `op` from a reset and returns its round trips: the depth of the longest chain of
   * requests each sent after the answer of the one before, among the requests answered before
   * `op` settled. OpenSSH answers in order, so the n-th answer is the n-th request's; a request
   * sent after answers to depth d has depth d + 1. Requests sent together (pipelined) share a
   * depth; one sent and not waited for costs the caller nothing: a CLOSE's answer never deepens
   * the chain (seamfs sends CLOSE behind its last request and never waits for it on success).
   */
  roundTrips(op: () => Promise<unknown>): Promise<number>
}

export async function countingClient(server: SftpServerInfo, port = server.port): Promise<CountingClient> {
  const counts = new Map<string, number>()
  // Depths of the requests not answered yet, oldest first, and the deepest answered one.
  const pending: { depth: number; waited: boolean }[] = []
  let answered = 0
  const client = new Client()
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve).once('error', reject)
    client.connect({
      host: server.host,
      port,
      username: server.username,
      privateKey: server.privateKey,
      debug: (line) => {
        const m = /^SFTP: Outbound: (?:Sending|Sent|Buffered) (\S+)/.exec(line)
        if (m !== null) {
          counts.set(m[1] as string, (counts.get(m[1] as string) ?? 0) + 1)
          pending.push({ depth: answered + 1, waited: m[1] !== 'CLOSE' })
        } else if (line.startsWith('SFTP: Inbound: Received') && !line.includes('VERSION')) {
          const request = pending.shift()
          if (request?.waited === true) answered = Math.max(answered, request.depth)
        }
      },
    })
  })
  client.on('error', () => undefined)
  return {
    client,
    counts,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset: () => counts.clear(),
    roundTrips: async (op) => {
      counts.clear()
      // Requests still in flight belong to what came before.
      for (const request of pending) request.waited = false
      answered = 0
      await op()
      return answered
    },
  }
}
