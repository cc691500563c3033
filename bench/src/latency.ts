/**
 * Remote stores at real-world latency: requests, round trips and wall time per
 * tool-level operation, seamfs side by side with what a user would pick instead, through a
 * TCP proxy that adds a one-way delay each way.
 *
 * Boots the real test servers (OpenSSH sshd, Ceph radosgw) with test-servers' start functions,
 * writes the fixtures straight to them, puts a {@link LatencyProxy} in front of each, and for
 * each delay runs every operation on every subject:
 *   SFTP: seamfs (SftpFileSystem; glob/grep through the tools) vs ssh2-sftp-client
 *   S3:   seamfs (S3FileSystem; glob/grep through the tools) vs the bare @aws-sdk/client-s3
 *         calls (the one-request limit) vs @flystorage/aws-s3
 * Columns: `req` = requests sent (SFTP packets from ssh2's debug lines; HTTP attempts from an
 * SDK middleware), `RT` = round trips on the critical path as the proxy counts them (see
 * latency/proxy.ts; TCP handshakes included; an upper bound, since a message the client does not
 * wait for still adds a level), `~RT` = the round trips the wall time implies, (ms − ms at 0 ms) /
 * RTT, `ms` = median wall time. Each operation resolves its path first, as a tool call does.
 * The servers are stopped by PID at the end.
 *
 * Usage: node bench/dist/latency.js [--quick] [--delays 0,10,50] [--only sftp|s3] [--json FILE]
 */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { availableParallelism, cpus, platform, release } from 'node:os'
import { parseArgs } from 'node:util'
import { delayTable, measure, OPERATIONS, QUICK_OPERATIONS, table, type Measured, type Operation, type Subject } from './latency/measure.js'
import { LatencyProxy } from './latency/proxy.js'
import { bareSdk, flystorage, purgeS3, seamfsS3, writeS3Fixtures } from './latency/s3.js'
import { bootServers } from './latency/servers.js'
import { seamfsSftp, sftpClient, writeSftpFixtures } from './latency/sftp.js'

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, delays: { type: 'string' }, only: { type: 'string' }, json: { type: 'string' } },
})
const delays = (args.delays ?? (args.quick ? '0,10' : '0,10,50')).split(',').map((d) => {
  const ms = Number(d)
  if (!Number.isInteger(ms) || ms < 0 || ms > 1000) throw new Error(`--delays: expected whole ms between 0 and 1000, found ${d}`)
  return ms
})
const operations: readonly Operation[] = args.quick ? QUICK_OPERATIONS : OPERATIONS
const REPS = args.quick ? 2 : 3
/** An operation slower than this is measured once per delay. */
const SLOW_MS = 2000
const LISTED = [100, 2500]

interface Backend {
  readonly name: string
  readonly proxy: LatencyProxy
  readonly subjects: readonly Subject[]
  cleanup(): Promise<void>
}

/** Runs every operation on every subject at each delay; prints one table per delay. */
async function run(backend: Backend): Promise<Measured[]> {
  const results: Measured[] = []
  let rep = 0
  // One untimed pass at 0 ms: connections open, code warm, caches as a long-running agent has them.
  backend.proxy.delayMs = 0
  for (const operation of operations) for (const subject of backend.subjects) await subject.ops[operation]?.(rep++)?.catch(() => undefined)
  for (const delayMs of delays) {
    backend.proxy.delayMs = delayMs
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
          rows.push({ backend: backend.name, delayMs, operation, subject: subject.name, ...m })
        } catch (err) {
          console.error(`${backend.name} ${subject.name} ${operation} at ${delayMs} ms failed: ${err instanceof Error ? err.message : String(err)}`)
        }
      }
    }
    console.log(`\n### ${backend.name}, ${delayMs} ms each way (RTT ${2 * delayMs} ms)\n`)
    console.log(
      delayTable(
        rows,
        backend.subjects.map((s) => s.name),
        results.filter((r) => r.delayMs === 0),
      ),
    )
    results.push(...rows)
  }
  const seamfs = results.filter((r) => r.subject === 'seamfs' && r.delayMs === delays[0])
  console.log(`\n${backend.name}: seamfs requests by type\n`)
  console.log(table([['operation', 'requests', 'by type'], ...seamfs.map((r) => [r.operation, String(r.requests), r.detail])]))
  return results
}

async function sftpBackend(server: NonNullable<Awaited<ReturnType<typeof bootServers>>['sftp']>): Promise<Backend> {
  const base = `${server.root}/latency-${randomBytes(4).toString('hex')}`
  await writeSftpFixtures(server, base, LISTED)
  const proxy = await LatencyProxy.start({ host: server.host, port: server.port })
  const subjects = [await seamfsSftp(server, proxy.port, base), await sftpClient(server, proxy.port, base)]
  return { name: 'SFTP (OpenSSH sshd)', proxy, subjects, cleanup: async () => undefined }
}

async function s3Backend(server: NonNullable<Awaited<ReturnType<typeof bootServers>>['s3']>): Promise<Backend> {
  const prefix = `latency/${randomBytes(4).toString('hex')}/`
  await writeS3Fixtures(server, prefix, LISTED)
  const url = new URL(server.endpoint)
  const proxy = await LatencyProxy.start({ host: url.hostname, port: Number(url.port) })
  const endpoint = `${url.protocol}//127.0.0.1:${proxy.port}`
  const subjects = [await seamfsS3(server, endpoint, prefix), bareSdk(server, endpoint, prefix), flystorage(server, endpoint, prefix)]
  return { name: 'S3 (Ceph radosgw)', proxy, subjects, cleanup: () => purgeS3(server, prefix) }
}

const environment = { node: process.version, platform: `${platform()} ${release()}`, cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown' }
console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} CPUs (${environment.cpuModel})`)
console.log(`delays ${delays.join(', ')} ms each way · ${REPS} repetitions (1 above ${SLOW_MS} ms)${args.quick ? ' · --quick' : ''}`)
const servers = await bootServers({ sftp: args.only !== 's3', s3: args.only !== 'sftp' })
const all: Measured[] = []
try {
  const starts: [string, () => Promise<Backend>][] = []
  if (servers.sftp !== null) starts.push(['SFTP', () => sftpBackend(servers.sftp!)])
  else console.log(`\nSFTP skipped: ${servers.sftpWhy}`)
  if (servers.s3 !== null) starts.push(['S3', () => s3Backend(servers.s3!)])
  else console.log(`\nS3 skipped: ${servers.s3Why}`)
  for (const [, start] of starts) {
    const backend = await start()
    try {
      all.push(...(await run(backend)))
    } finally {
      for (const subject of backend.subjects) await subject.close()
      await backend.proxy.close()
      await backend.cleanup()
    }
  }
  if (args.json !== undefined) {
    writeFileSync(args.json, `${JSON.stringify({ environment, delays, results: all }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await servers.stop()
}
