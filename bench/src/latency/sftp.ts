/**
 * The SFTP side: seamfs (`SftpFileSystem` for the file operations, the `glob`/`grep` tools for
 * the searches) against `ssh2-sftp-client` used the way its README shows, both through the
 * proxy. Requests are counted from ssh2's debug lines, as packages/backend-ssh/test does.
 */
import { Client, type ConnectConfig, type SFTPWrapper } from 'ssh2'
import SftpClient from 'ssh2-sftp-client'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { bounded, fixtureFiles, NEEDLE, WRITTEN } from './fixtures.js'
import { RequestCounter, type Subject } from './measure.js'
import { seamfsOps } from './seamfs-ops.js'
import type { SftpInfo } from './servers.js'

const REQUEST = /^SFTP: Outbound: (?:Sending|Sent|Buffered) (\S+)/

/** ssh2's settings for `server` on `port` (the proxy's), counting SFTP requests into `counter` from ssh2's debug lines. */
export function config(server: SftpInfo, port: number, counter?: RequestCounter): ConnectConfig {
  return {
    host: '127.0.0.1',
    port,
    username: server.username,
    privateKey: server.privateKey,
    ...(counter === undefined
      ? {}
      : {
          debug: (line: string) => {
            const m = REQUEST.exec(line)
            if (m !== null) counter.add(m[1] as string)
          },
        }),
  }
}

/** A connected ssh2 client. */
export async function connect(cfg: ConnectConfig): Promise<Client> {
  const client = new Client()
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve).once('error', reject)
    client.connect(cfg)
  })
  client.on('error', () => undefined)
  return client
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))))

/** Writes the fixtures under `base` straight to the server (no proxy); returns when all are there. */
export async function writeSftpFixtures(server: SftpInfo, base: string, listed: readonly number[]): Promise<void> {
  const client = await connect(config(server, server.port))
  try {
    const sftp = await call<SFTPWrapper>((cb) => client.sftp(cb))
    const files = fixtureFiles(listed)
    const dirs = new Set<string>([base])
    for (const path of files.keys()) {
      const parts = path.split('/').slice(0, -1)
      for (let i = 1; i <= parts.length; i++) dirs.add(`${base}/${parts.slice(0, i).join('/')}`)
    }
    for (const dir of [...dirs].sort((a, b) => a.length - b.length)) await call<void>((cb) => sftp.mkdir(dir, cb))
    for (const name of ['seamfs', 'ssh2-sftp-client']) await call<void>((cb) => sftp.mkdir(`${base}/w-${name}`, cb))
    await bounded([...files], 32, ([path, content]) => call<void>((cb) => sftp.writeFile(`${base}/${path}`, content, cb)))
  } finally {
    client.end()
  }
}

/** seamfs over the proxy: each operation resolves its path first, as a tool call does. */
export async function seamfsSftp(server: SftpInfo, port: number, base: string): Promise<Subject> {
  const counter = new RequestCounter()
  const client = await connect(config(server, port, counter))
  const fs = new SftpFileSystem({ client, root: base })
  await fs.connect()
  return {
    name: 'seamfs',
    requests: () => counter.total(),
    detail: () => counter.detail(),
    reset: () => counter.reset(),
    ops: seamfsOps(fs),
    close: async () => {
      await fs.close()
      client.end()
    },
  }
}

/** ssh2-sftp-client over the proxy, as its README shows; createIfAbsent = exists + put, edit = get + put. */
export async function sftpClient(server: SftpInfo, port: number, base: string): Promise<Subject> {
  const counter = new RequestCounter()
  const sftp = new SftpClient()
  await sftp.connect(config(server, port, counter))
  const p = (path: string): string => `${base}/${path}`
  let mark = 'A'
  const walk = async (dir: string, out: string[]): Promise<string[]> => {
    for (const entry of await sftp.list(dir)) {
      if (entry.type === 'd') await walk(`${dir}/${entry.name}`, out)
      else out.push(`${dir}/${entry.name}`)
    }
    return out
  }
  return {
    name: 'ssh2-sftp-client',
    requests: () => counter.total(),
    detail: () => counter.detail(),
    reset: () => counter.reset(),
    ops: {
      'read 4 KiB': async () => (await sftp.get(p('data/small.txt'))).toString('utf8'),
      'read 10 MiB': async () => (await sftp.get(p('data/big.txt'))).toString('utf8'),
      'write new': (rep) => sftp.put(Buffer.from(WRITTEN), p(`w-ssh2-sftp-client/new-${rep}.txt`)),
      overwrite: () => sftp.put(Buffer.from(WRITTEN), p('data/over.txt')),
      'overwrite, no before': () => sftp.put(Buffer.from(WRITTEN), p('data/over.txt')),
      createIfAbsent: async (rep) => {
        const path = p(`w-ssh2-sftp-client/cia-${rep}.txt`)
        if ((await sftp.exists(path)) === false) await sftp.put(Buffer.from(WRITTEN), path)
      },
      edit: async () => {
        const next = mark === 'A' ? 'B' : 'A'
        const path = p('data/edit-ssh2-sftp-client.txt')
        const content = (await sftp.get(path)).toString('utf8')
        await sftp.put(Buffer.from(content.replace(`MARK-${mark}`, `MARK-${next}`)), path)
        mark = next
      },
      'list 100': () => sftp.list(p('list100')),
      'list 2,500': () => sftp.list(p('list2500')),
      stat: (rep) => sftp.stat(p(`list2500/f${String((rep + 1250) % 2500).padStart(4, '0')}.txt`)),
      'glob 200 files': async () => (await walk(p('tree'), [])).filter((f) => f.endsWith('.txt')),
      'grep 200 files': async () => {
        const hits: string[] = []
        for (const file of await walk(p('tree'), [])) {
          const content = (await sftp.get(file)).toString('utf8')
          if (content.includes(NEEDLE)) hits.push(file)
        }
        return hits
      },
    },
    close: async () => void (await sftp.end()),
  }
}
