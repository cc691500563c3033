/**
 * The SFTP rows of the tool table: the tools over an `SftpFileSystem` with its defaults (the
 * ssh2 client is handed in only to count its requests), next to `ssh2-sftp-client` doing the
 * same job as its README shows, both through the proxy.
 */
import SftpClient from 'ssh2-sftp-client'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { bounded, NEEDLE, readFile, SMALL, TREE_FILES_PER_DIR, WRITTEN } from './fixtures.js'
import { RequestCounter } from './measure.js'
import type { LatencyProxy } from './proxy.js'
import type { SftpInfo } from './servers.js'
import { config, connect } from './sftp.js'
import { NEEDLE_FILES, SEARCH_CONCURRENCY, TOOL_ROWS, toolSteps, TREE_FILES, type ToolRowName } from './tool-steps.js'
import type { Step, Target, ToolBackend, ToolRow } from './tool-table.js'

/** The bound on a grep over {@link TREE_FILES} small files: two round trips per batch of reads, plus two. */
export const SFTP_GREP_BOUND = 2 * Math.ceil(TREE_FILES / SEARCH_CONCURRENCY) + 2

const atMost = (text: string, n: number): Target => ({ text: `${text}: target ≤ ${n} RT`, bound: () => n })
const asBare = (text: string): Target => ({ text: `${text}: target ≤ ssh2-sftp-client`, bound: (bare) => bare })

function bareRows(sftp: SftpClient, base: string): Record<ToolRowName, { label: string; bare: Step; target?: Target }> {
  const p = (path: string): string => `${base}/${path}`
  const get = async (path: string): Promise<string> => (await sftp.get(p(path))).toString('utf8')
  const put = async (path: string, text: string): Promise<void> => void (await sftp.put(Buffer.from(text), p(path)))
  /** Every file under `dir`, a level's listings at once. */
  const walk = async (dir: string): Promise<string[]> => {
    const files: string[] = []
    for (let level = [dir]; level.length > 0;) {
      const listed = await Promise.all(level.map(async (d) => (await sftp.list(p(d))).map((e) => ({ path: `${d}/${e.name}`, type: e.type }))))
      level = []
      for (const entry of listed.flat()) {
        if (entry.type === 'd') level.push(entry.path)
        else files.push(entry.path)
      }
    }
    return files
  }
  const expect = (ok: boolean, what: string): void => {
    if (!ok) throw new Error(`bare SFTP: ${what}`)
  }
  let mark = 'A'
  return {
    'read 4 KiB': {
      label: 'get',
      bare: { run: async (rep) => expect((await get(readFile(rep))) === SMALL, 'read: wrong content') },
      target: asBare('SFTP read'),
    },
    'write new file': {
      label: 'put',
      bare: { run: (rep) => put(`data/new-bare-${rep}.txt`, WRITTEN) },
      target: asBare('SFTP write'),
    },
    'overwrite after read': {
      label: 'put',
      bare: { before: async () => void (await get('data/over-bare.txt')), run: () => put('data/over-bare.txt', WRITTEN) },
      target: asBare('SFTP overwrite'),
    },
    'edit after read': {
      label: 'get + put',
      bare: {
        run: async () => {
          const next = mark === 'A' ? 'B' : 'A'
          const body = await get('data/edit-bare.txt')
          expect(body.startsWith(`MARK-${mark}\n`), 'edit: mark not found')
          await put('data/edit-bare.txt', body.replace(`MARK-${mark}`, `MARK-${next}`))
          mark = next
        },
      },
      target: atMost('SFTP edit', 5),
    },
    'list 100': {
      label: 'list',
      bare: { run: async () => expect((await sftp.list(p('list100'))).length === 100, 'list: not 100 entries') },
      target: atMost('SFTP list of 100 entries', 2),
    },
    'glob 200 files': {
      label: `list × ${1 + TREE_FILES / TREE_FILES_PER_DIR}, a level at once`,
      bare: { run: async () => expect((await walk('tree')).filter((f) => f.endsWith('.txt')).length === TREE_FILES, 'glob: not 200 files') },
    },
    'grep 200 files': {
      label: `the same walk + ${TREE_FILES} get, ${SEARCH_CONCURRENCY} at a time`,
      bare: {
        run: async () => {
          let hits = 0
          await bounded(await walk('tree'), SEARCH_CONCURRENCY, async (file) => {
            if ((await get(file)).includes(NEEDLE)) hits++
          })
          expect(hits === NEEDLE_FILES, 'grep: wrong number of hits')
        },
      },
      target: atMost(`SFTP grep over ${TREE_FILES} files (2 × ⌈${TREE_FILES} / ${SEARCH_CONCURRENCY}⌉ + 2)`, SFTP_GREP_BOUND),
    },
  }
}

/** The SFTP rows over `proxy` (in front of sshd), in the fixtures under `base`. */
export async function sftpToolBackend(server: SftpInfo, proxy: LatencyProxy, base: string): Promise<ToolBackend & { close(): Promise<void> }> {
  const toolCounter = new RequestCounter()
  const client = await connect(config(server, proxy.port, toolCounter))
  const fs = new SftpFileSystem({ client, root: base })
  await fs.connect()
  const bareCounter = new RequestCounter()
  const sftp = new SftpClient()
  await sftp.connect(config(server, proxy.port, bareCounter))
  // Each call in flight holds listeners on the connection: a search's calls at once are expected, not a leak.
  sftp.client.setMaxListeners(64)
  const tools = toolSteps(fs)
  const bare = bareRows(sftp, base)
  const rows: ToolRow[] = TOOL_ROWS.map((name) => ({ name, tool: tools[name], bareLabel: bare[name].label, bare: bare[name].bare, target: bare[name].target }))
  return {
    name: 'SFTP',
    proxy,
    toolCounter,
    bareCounter,
    rows,
    close: async () => {
      await fs.close()
      client.end()
      await sftp.end()
    },
  }
}
