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
}

export async function countingClient(server: SftpServerInfo, port = server.port): Promise<CountingClient> {
  const counts = new Map<string, number>()
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
        if (m !== null) counts.set(m[1] as string, (counts.get(m[1] as string) ?? 0) + 1)
      },
    })
  })
  client.on('error', () => undefined)
  return {
    client,
    counts,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset: () => counts.clear(),
  }
}
