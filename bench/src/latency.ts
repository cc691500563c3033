/**
 * Remote stores at real-world latency: requests, round trips and wall time per call, through a
 * TCP proxy on 127.0.0.1 that adds half of a round-trip time (RTT) each way.
 *
 * Boots the real test servers (OpenSSH sshd, Ceph radosgw) with test-servers' start functions,
 * writes the fixtures straight to them, puts a {@link LatencyProxy} in front of each, and at each
 * RTT (0, 10 and 50 ms by default) measures two tables per store:
 *
 * - **tools** (what issue 31 is judged by): each row is the tool call the model makes, through
 *   `createFileToolsByName` as a harness mounts the tools (default fence, read-before-write policy,
 *   default config), next to the bare client doing the same job (`@aws-sdk/client-s3`,
 *   `ssh2-sftp-client`); each call checked for its answer; median of 5, a repetition's RTTs run
 *   back to back, so `~RT` is the median of paired differences; each row names the issue's target
 *   and whether `~RT` at the largest RTT meets it. See latency/tool-table.ts.
 * - **backend**: each operation at the backend (resolve, then the contract call) next to the
 *   bare clients and `@flystorage/aws-s3`, median of 3.
 *
 * Columns: `req` = requests sent (SFTP packets from ssh2's debug lines; HTTP attempts from an SDK
 * middleware), `RT` = round trips on the critical path as the proxy counts them (latency/proxy.ts;
 * TCP handshakes included; an upper bound), `~RT` = the round trips the wall time implies,
 * (ms − ms at 0 ms) / the RTT measured through a proxy at that delay (latency/rtt.ts), `ms` =
 * median wall time. The servers are stopped by PID at the end.
 *
 * Usage: node bench/dist/latency.js [--quick] [--rtts 0,10,50] [--only sftp|s3] [--tables tools,backend] [--json FILE]
 * `--quick`: the tool table only, at 0 and 50 ms, median of 3.
 */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { availableParallelism, cpus, platform, release } from 'node:os'
import { parseArgs } from 'node:util'
import { delayTable, measure, OPERATIONS, QUICK_OPERATIONS, table, type Measured, type Operation, type Subject } from './latency/measure.js'
import { LatencyProxy } from './latency/proxy.js'
import { measureRtt } from './latency/rtt.js'
import { bareSdk, flystorage, purgeS3, seamfsS3, writeS3Fixtures } from './latency/s3.js'
import { s3ToolBackend } from './latency/s3-tools.js'
import { bootServers, type S3Info, type SftpInfo } from './latency/servers.js'
import { seamfsSftp, sftpClient, writeSftpFixtures } from './latency/sftp.js'
import { sftpToolBackend } from './latency/sftp-tools.js'
import { detailTable, runToolRows, TOLERANCE_RT, toolTable, verdict, type ToolBackend, type ToolCell } from './latency/tool-table.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rtts: { type: 'string' },
    only: { type: 'string' },
    tables: { type: 'string' },
    json: { type: 'string' },
  },
})
const rtts = [
  ...new Set([
    0,
    ...(args.rtts ?? (args.quick ? '0,50' : '0,10,50')).split(',').map((d) => {
      const ms = Number(d)
      if (!Number.isInteger(ms) || ms < 0 || ms > 2000 || ms % 2 !== 0) throw new Error(`--rtts: expected even whole ms between 0 and 2000, found ${d}`)
      return ms
    }),
  ]),
].sort((a, b) => a - b)
const tables = new Set((args.tables ?? (args.quick ? 'tools' : 'tools,backend')).split(','))
for (const t of tables) if (t !== 'tools' && t !== 'backend') throw new Error(`--tables: expected tools and/or backend, found ${t}`)
if (args.only !== undefined && args.only !== 's3' && args.only !== 'sftp') throw new Error(`--only: expected sftp or s3, found ${args.only}`)
const operations: readonly Operation[] = args.quick ? QUICK_OPERATIONS : OPERATIONS
const TOOL_REPS = args.quick ? 3 : 5
const REPS = args.quick ? 2 : 3
/** A backend-table operation slower than this is measured once per RTT. */
const SLOW_MS = 2000
const LISTED = [100, 2500]

interface Backend {
  readonly name: string
  readonly proxy: LatencyProxy
  readonly subjects: readonly Subject[]
}

/** The backend table: every operation on every subject at each RTT, one table per RTT. */
async function runBackend(backend: Backend, measuredRtt: ReadonlyMap<number, number>): Promise<Measured[]> {
  const results: Measured[] = []
  let rep = 0
  // One untimed pass at 0 ms: connections open, code warm, caches as a long-running agent has them.
  backend.proxy.delayMs = 0
  for (const operation of operations) for (const subject of backend.subjects) await subject.ops[operation]?.(rep++)?.catch(() => undefined)
  for (const rttMs of rtts) {
    backend.proxy.delayMs = rttMs / 2
    const rows: Measured[] = []
    for (const operation of operations) {
      for (const subject of backend.subjects) {
        const op = subject.ops[operation]
        if (op === undefined) continue
        try {
          let m = await measure(backend.proxy, subject, op, 1, rep++)
          if (m.wallMs < SLOW_MS && REPS > 1) {
            m = await measure(backend.proxy, subject, op, REPS, rep)
            rep += REPS
          }
          rows.push({ backend: backend.name, rttMs, operation, subject: subject.name, ...m })
        } catch (err) {
          console.error(`${backend.name} ${subject.name} ${operation} at RTT ${rttMs} ms failed: ${err instanceof Error ? err.message : String(err)}`)
        }
      }
    }
    console.log(`\n### Backend calls: ${backend.name}, RTT ${rttMs} ms${rttMs > 0 ? ` (measured ${measuredRtt.get(rttMs)?.toFixed(1)} ms)` : ''}\n`)
    const baseline = results.filter((r) => r.rttMs === 0)
    console.log(
      delayTable(
        rows,
        backend.subjects.map((s) => s.name),
        baseline,
        measuredRtt.get(rttMs),
      ),
    )
    results.push(...rows)
  }
  const seamfs = results.filter((r) => r.subject === 'seamfs' && r.rttMs === rtts[0])
  console.log(`\n${backend.name}: seamfs requests by type (backend calls)\n`)
  console.log(table([['operation', 'requests', 'by type'], ...seamfs.map((r) => [r.operation, String(r.requests), r.detail])]))
  return results
}

/** The tool table of one store; returns its cells and the printed table. */
async function runTools(backend: ToolBackend): Promise<{ cells: ToolCell[]; printed: string }> {
  const cells = await runToolRows(backend, measuredRtt, TOOL_REPS)
  const printed = toolTable(backend, cells)
  console.log(`\n### Tool calls: ${backend.name} (median of ${TOOL_REPS}; req and RT at RTT ${Math.max(...rtts)} ms)\n`)
  console.log(printed)
  console.log(`\n${backend.name}: requests by type (tool calls, RTT ${Math.max(...rtts)} ms)\n`)
  console.log(detailTable(backend, cells))
  return { cells, printed }
}

/** The bench sends traffic to this machine only: the servers it boots listen on 127.0.0.1. */
function loopback(host: string): string {
  if (host !== '127.0.0.1') throw new Error(`the latency bench talks to 127.0.0.1 only, not to ${host}`)
  return host
}

interface Store {
  readonly name: string
  readonly proxy: LatencyProxy
  tools(): Promise<ToolBackend & { close(): Promise<void> }>
  subjects(): Promise<Subject[]>
  cleanup(): Promise<void>
}

async function sftpStore(server: SftpInfo): Promise<Store> {
  const base = `${server.root}/latency-${randomBytes(4).toString('hex')}`
  await writeSftpFixtures(server, base, LISTED)
  const proxy = await LatencyProxy.start({ host: loopback(server.host), port: server.port })
  return {
    name: 'SFTP (OpenSSH sshd)',
    proxy,
    tools: () => sftpToolBackend(server, proxy, base),
    subjects: async () => [await seamfsSftp(server, proxy.port, base), await sftpClient(server, proxy.port, base)],
    cleanup: async () => undefined,
  }
}

async function s3Store(server: S3Info): Promise<Store> {
  const prefix = `latency/${randomBytes(4).toString('hex')}/`
  await writeS3Fixtures(server, prefix, LISTED)
  const url = new URL(server.endpoint)
  const proxy = await LatencyProxy.start({ host: loopback(url.hostname), port: Number(url.port) })
  const endpoint = `${url.protocol}//127.0.0.1:${proxy.port}`
  return {
    name: 'S3 (Ceph radosgw)',
    proxy,
    tools: () => s3ToolBackend(server, proxy, prefix),
    subjects: async () => [await seamfsS3(server, endpoint, prefix), bareSdk(server, endpoint, prefix), flystorage(server, endpoint, prefix)],
    cleanup: () => purgeS3(server, prefix),
  }
}

const environment = { node: process.version, platform: `${platform()} ${release()}`, cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown' }
console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} CPUs (${environment.cpuModel})`)
const measuredRtt = new Map<number, number>([[0, 0]])
for (const rtt of rtts) if (rtt > 0) measuredRtt.set(rtt, await measureRtt(rtt / 2))
console.log(
  `RTT ${rtts.join(', ')} ms (half each way; measured through the proxy: ${[...measuredRtt].map(([r, m]) => `${r} → ${m.toFixed(1)}`).join(', ')} ms)` +
    ` · tables: ${[...tables].join(', ')} · tool calls median of ${TOOL_REPS}${tables.has('backend') ? `, backend calls median of ${REPS} (1 above ${SLOW_MS} ms)` : ''}${args.quick ? ' · --quick' : ''}`,
)
const servers = await bootServers({ sftp: args.only !== 's3', s3: args.only !== 'sftp' })
const backendResults: Measured[] = []
const toolCells: ToolCell[] = []
const summaries: string[] = []
let missed = 0
try {
  const starts: (() => Promise<Store>)[] = []
  if (servers.sftp !== null) starts.push(() => sftpStore(servers.sftp!))
  else console.log(`\nSFTP skipped: ${servers.sftpWhy}`)
  if (servers.s3 !== null) starts.push(() => s3Store(servers.s3!))
  else console.log(`\nS3 skipped: ${servers.s3Why}`)
  for (const start of starts) {
    const store = await start()
    try {
      if (tables.has('tools')) {
        const backend = await store.tools()
        try {
          const { cells, printed } = await runTools(backend)
          toolCells.push(...cells)
          summaries.push(`${store.name}\n\n${printed}`)
          missed += backend.rows.filter((row) => verdict(row, cells).meets === false).length
        } finally {
          await backend.close()
        }
      }
      if (tables.has('backend')) {
        const subjects = await store.subjects()
        try {
          backendResults.push(...(await runBackend({ name: store.name, proxy: store.proxy, subjects }, measuredRtt)))
        } finally {
          for (const subject of subjects) await subject.close()
        }
      }
    } finally {
      await store.proxy.close()
      await store.cleanup()
    }
  }
  if (summaries.length > 0) {
    console.log(
      `\n## Issue 31: tool calls against their targets (~RT at RTT ${Math.max(...rtts)} ms, median of ${TOOL_REPS}; meets = within ${TOLERANCE_RT} RT)\n`,
    )
    console.log(summaries.join('\n\n'))
    console.log(`\n${missed === 0 ? 'every target met' : `${missed} target(s) missed`}`)
  }
  if (args.json !== undefined) {
    const json = { environment, rtts, measuredRtt: Object.fromEntries(measuredRtt), toolCalls: toolCells, backendCalls: backendResults }
    writeFileSync(args.json, `${JSON.stringify(json, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await servers.stop()
}
