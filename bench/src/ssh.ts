/**
 * SftpFileSystem against raw ssh2 calls on the same OpenSSH server, same run.
 *
 * Boots its own sshd on 127.0.0.1 with test-servers/sftp-server.sh (needs root
 * and openssh-server; without them it says why and exits 0), stops it at the end.
 *
 * Timed (median of alternating repetitions after one untimed warm-up per side):
 *   read 10 MiB   of ASCII text: ssh2 `fastGet` (64 × 32 KiB reads in flight,
 *                 into a local file) vs `readText` (32 × 64 KiB in flight,
 *                 strict UTF-8 decode); target: seamfs ≤ 1.5× fastGet
 *   stat / write 4 KiB / edit 4 KiB / list 100: seamfs only, ms per operation
 *
 * Counted: SFTP requests per operation, by type, read from ssh2's debug
 * output on a client injected into a second SftpFileSystem.
 *
 * Usage: node bench/dist/ssh.js [--quick] [--json FILE]
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, platform, release, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Client, type ConnectConfig, type SFTPWrapper } from 'ssh2'
import { SftpFileSystem } from '@seamfs/backend-ssh'

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'string' } } })
const READ_BYTES = 10 * 1024 * 1024
const READ_REPS = args.quick ? 3 : 9
const SMALL_OPS = args.quick ? 20 : 100
const READ_TARGET = 1.5

const script = fileURLToPath(new URL('../../test-servers/sftp-server.sh', import.meta.url))
if (!existsSync('/usr/sbin/sshd') || process.getuid?.() !== 0) {
  console.log('ssh bench skipped: it boots its own sshd, which needs root and openssh-server (apt-get install openssh-server openssh-sftp-server)')
  process.exit(0)
}
const stateDir = join(tmpdir(), `seamfs-bench-sftp-${randomBytes(6).toString('hex')}`)
const env = new Map(
  execFileSync('bash', [script, 'start', stateDir, String(process.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
)
const stop = (): void => {
  execFileSync('bash', [script, 'stop', stateDir])
}
const need = (name: string): string => env.get(name) ?? (stop(), process.exit(1))
const server = {
  host: need('SFTP_HOST'),
  port: Number(need('SFTP_PORT')),
  username: need('SFTP_USER'),
  privateKey: readFileSync(need('SFTP_KEY'), 'utf8'),
  hostKeySha256: need('SFTP_HOSTKEY_SHA256'),
}
const root = need('SFTP_ROOT')
const localDir = mkdtempSync(join(tmpdir(), 'seamfs-bench-ssh-'))

async function connect(extra: Partial<ConnectConfig> = {}): Promise<{ client: Client; sftp: SFTPWrapper }> {
  const client = new Client()
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve).once('error', reject)
    client.connect({ host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, ...extra })
  })
  client.setNoDelay(true)
  const sftp = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))))
  return { client, sftp }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

async function timeRead(raw: SFTPWrapper, fs: SftpFileSystem): Promise<{ raw: number[]; lib: number[] }> {
  const remote = `${root}/read-10MiB.txt`
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n'
  writeFileSync(join(localDir, 'source.txt'), line.repeat(Math.ceil(READ_BYTES / Buffer.byteLength(line))).slice(0, READ_BYTES))
  await new Promise<void>((resolve, reject) => raw.fastPut(join(localDir, 'source.txt'), remote, {}, (err) => (err ? reject(err) : resolve())))
  const target = await fs.resolve(remote)
  const times = { raw: [] as number[], lib: [] as number[] }
  for (let rep = 0; rep <= READ_REPS; rep++) {
    let start = performance.now()
    await new Promise<void>((resolve, reject) => raw.fastGet(remote, join(localDir, 'copy.txt'), {}, (err) => (err ? reject(err) : resolve())))
    if (rep > 0) times.raw.push(performance.now() - start)
    start = performance.now()
    const text = await fs.readText(target)
    if (rep > 0) times.lib.push(performance.now() - start)
    if (text.length === 0) throw new Error('empty read')
  }
  return times
}

async function timeSmall(fs: SftpFileSystem): Promise<Record<string, number>> {
  const body = 'x'.repeat(4096 - 12)
  const targets = await Promise.all(Array.from({ length: SMALL_OPS }, (_, i) => fs.resolve(`small/f${i}.txt`)))
  const out: Record<string, number> = {}
  const time = async (name: string, op: (i: number) => Promise<unknown>): Promise<void> => {
    const start = performance.now()
    for (let i = 0; i < SMALL_OPS; i++) await op(i)
    out[name] = (performance.now() - start) / SMALL_OPS
  }
  await time('write 4 KiB (create)', (i) => fs.writeText(targets[i]!, `MARK-0 ${i} ${body}`))
  await time('write 4 KiB (replace)', (i) => fs.writeText(targets[i]!, `MARK-0 ${i} ${body}`))
  await time('stat (recently written: hashes)', (i) => fs.stat(targets[i]!))
  await time('edit 4 KiB', (i) => fs.editText(targets[i]!, { oldString: 'MARK-0', newString: 'MARK-1', replaceAll: false }))
  await time('read 4 KiB', (i) => fs.readText(targets[i]!))
  const dir = await fs.resolve('small')
  await time(`list ${SMALL_OPS}`, () => fs.listDir(dir))
  return out
}

/** Requests per operation, by SFTP type, from ssh2's debug lines. */
async function countRequests(): Promise<{ op: string; total: number; detail: string }[]> {
  const counts = new Map<string, number>()
  const { client } = await connect({
    debug: (line) => {
      const m = /^SFTP: Outbound: (?:Sending|Sent|Buffered) (\S+)/.exec(line)
      if (m !== null) counts.set(m[1] as string, (counts.get(m[1] as string) ?? 0) + 1)
    },
  })
  const fs = new SftpFileSystem({ client, root })
  const rows: { op: string; total: number; detail: string }[] = []
  const count = async (op: string, run: () => Promise<unknown>): Promise<void> => {
    counts.clear()
    await run()
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    const detail = [...counts.entries()].map(([type, n]) => `${type.replace('@openssh.com', '@')}×${n}`).join(' ')
    rows.push({ op, total, detail })
  }
  const text = `MARK\n${'y'.repeat(4000)}\n`
  await fs.connect()
  await count('resolve (missing file in a missing directory)', () => fs.resolve('count/a.txt'))
  const target = await fs.resolve('count/a.txt')
  await count('write 4 KiB, new file in a new directory', () => fs.writeText(target, text))
  await count('resolve (existing file)', () => fs.resolve('count/a.txt'))
  await count('write 4 KiB, replace (diff basis read)', () => fs.writeText(target, text))
  const { version } = await fs.writeText(target, text)
  await count('write 4 KiB, replaceIfVersion', () => fs.writeText(target, text, { expected: { kind: 'replaceIfVersion', version } }))
  await count('write 4 KiB, createIfAbsent', async () => fs.writeText(await fs.resolve('count/b.txt'), text, { expected: { kind: 'createIfAbsent' } }))
  await count('edit 4 KiB', () => fs.editText(target, { oldString: 'MARK', newString: 'DONE', replaceAll: false }))
  await count('read 4 KiB', () => fs.readText(target))
  await count('stat, unsettled (reads + hashes)', () => fs.stat(target))
  await new Promise((resolve) => setTimeout(resolve, 2100))
  await fs.stat(target)
  await count('stat, settled hash cached', () => fs.stat(target))
  for (let i = 0; i < 98; i++) await fs.writeText(await fs.resolve(`count/f${i}.txt`), 'x')
  const dir = await fs.resolve('count')
  await count('list 100 entries', () => fs.listDir(dir))
  await count('read 10 MiB', async () => fs.readText(await fs.resolve('read-10MiB.txt')))
  await fs.close()
  client.end()
  return rows
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] as string).length)))
  const line = (row: readonly string[]): string => `| ${row.map((cell, c) => cell.padEnd(widths[c] as number)).join(' | ')} |`
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n')
}

const environment = { node: process.version, platform: `${platform()} ${release()}`, cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown' }
console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} CPUs (${environment.cpuModel})`)
console.log(`OpenSSH sshd on 127.0.0.1:${server.port} (booted by ${script})${args.quick ? ' · --quick' : ''}\n`)
try {
  const raw = await connect()
  const fs = new SftpFileSystem({ ...server, root })
  const read = await timeRead(raw.sftp, fs)
  const ratio = median(read.lib) / median(read.raw)
  const ok = ratio <= READ_TARGET
  console.log(
    table([
      ['job', 'ssh2 fastGet median (ms)', 'seamfs readText median (ms)', 'ratio', 'target', 'ok'],
      ['read 10 MiB', median(read.raw).toFixed(1), median(read.lib).toFixed(1), `${ratio.toFixed(2)}×`, `≤ ${READ_TARGET.toFixed(2)}×`, ok ? 'yes' : 'NO'],
    ]),
  )
  const range = (ms: readonly number[]): string => `${Math.min(...ms).toFixed(1)}–${Math.max(...ms).toFixed(1)}`
  console.log(`per-repetition spread (ms): fastGet ${range(read.raw)} · readText ${range(read.lib)}\n`)
  const small = await timeSmall(fs)
  console.log(table([['seamfs operation (loopback)', 'ms/op'], ...Object.entries(small).map(([op, ms]) => [op, ms.toFixed(2)])]))
  await fs.close()
  raw.client.end()
  const counts = await countRequests()
  console.log(`\n${table([['operation', 'SFTP requests', 'by type'], ...counts.map((r) => [r.op, String(r.total), r.detail])])}`)
  if (args.json !== undefined) {
    writeFileSync(args.json, `${JSON.stringify({ environment, read: { ...read, ratio, target: READ_TARGET, ok }, small, counts }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  stop()
  rmSync(localDir, { recursive: true, force: true })
}
