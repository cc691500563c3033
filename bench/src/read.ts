/**
 * The `read` tool on a large file against a raw `node:fs` scan, same job, same run.
 *
 * Jobs (sizes of the full run; `--quick` shrinks them for a smoke run):
 *   window  lines 990,001–992,000 of a 1,000,000-line file (60 B a line, ~60 MB):
 *           wall time (target ≤ 1.2× raw) and peak RSS growth (target < 32 MiB)
 *   1 GiB   the last 2,000-line window of a 1 GiB file (16,777,216 lines of 64 B):
 *           peak RSS growth (target < 32 MiB); wall time reported, no target
 *
 * Library side: `createFileTools({ fs: new LocalFileSystem(...) })`'s `read`
 * with `{ file_path, offset, limit: 2000 }`. Both files are above the default
 * readStreamMinSize (10 MiB), so the tool streams (64 KiB chunks, strict UTF-8
 * decoding) and keeps only the window while counting every line. readMaxBytes
 * is raised to 256 KiB so the byte cap does not cut the 2,000 lines short;
 * every other setting is the default, and the rendered envelope is built.
 * Raw side: `createReadStream(path, { encoding: 'utf8', highWaterMark: 64 KiB })`,
 * lines split on `\n` (a partial last line carried to the next chunk), lines in
 * the window kept, all counted. Both sides must agree on the window's first
 * and last line and on the line count.
 *
 * Method: time — one untimed warm-up per side, then raw and library runs
 * alternate in this process (raw, lib, raw, lib, ...); the table shows the
 * medians (performance.now) and their ratio; the process CPU time of the same
 * runs (process.cpuUsage, all threads) is shown beside it, as wall time on a
 * busy machine also measures the scheduler. Memory — each side runs once in
 * a fresh child (`node bench/dist/read.js --child ...`) that takes its RSS
 * after imports and setup, samples process.memoryUsage.rss() every 2 ms
 * during the read, and also reads process.resourceUsage().maxRSS at the end;
 * growth is the larger of (highest sample − start) and (maxRSS − start).
 * Data lives under <repo>/.bench-tmp and is removed at the end.
 *
 * Usage: node bench/dist/read.js [--quick] [--json FILE]
 */
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, platform, release } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileTools, type FileTool, type ReadValue } from '@seamfs/tools'

type Side = 'raw' | 'lib'
const SIDES: readonly Side[] = ['raw', 'lib']
const MiB = 1024 * 1024
const LIMIT = 2000
const READ_MAX_BYTES = 256 * 1024
const TIME_TARGET = 1.2
const RSS_TARGET_MIB = 32

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    child: { type: 'boolean', default: false },
    side: { type: 'string' },
    file: { type: 'string' },
    offset: { type: 'string' },
  },
})

/** What one read returns, from either side. */
interface Scan {
  readonly total: number
  readonly kept: number
  readonly first: string | undefined
  readonly last: string | undefined
}

/** The raw baseline: stream, decode, split, keep the window, count everything. */
async function rawScan(path: string, offset: number, limit: number): Promise<Scan> {
  const kept: string[] = []
  const end = offset + limit - 1
  let total = 0
  let carry = ''
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 }) as AsyncIterable<string>) {
    const parts = (carry + chunk).split('\n')
    carry = parts.pop() ?? ''
    for (const line of parts) {
      total++
      if (total >= offset && total <= end) kept.push(line)
    }
  }
  if (carry !== '') {
    total++
    if (total >= offset && total <= end) kept.push(carry)
  }
  return { total, kept: kept.length, first: kept[0], last: kept.at(-1) }
}

function readToolFor(dir: string): FileTool {
  const tools = createFileTools({ fs: new LocalFileSystem({ cwd: dir }), config: { readMaxBytes: READ_MAX_BYTES } })
  return tools.find((t) => t.name === 'read') as FileTool
}

async function libScan(tool: FileTool, path: string, offset: number, limit: number): Promise<Scan> {
  const result = await tool.execute({ file_path: path, offset, limit })
  if (result.isError) throw new Error(result.text)
  const value = result.value as ReadValue
  return { total: value.totalLines, kept: value.lines.length, first: value.lines[0]?.text, last: value.lines.at(-1)?.text }
}

// ---------------------------------------------------------------- child mode

/** One read in this (fresh) process, reporting its RSS growth as one JSON line. */
async function child(): Promise<void> {
  const side = args.side as Side
  const path = args.file as string
  const offset = Number(args.offset)
  const tool = readToolFor(join(path, '..'))
  const start = process.memoryUsage.rss()
  let peak = start
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 2)
  const began = performance.now()
  const scan = side === 'raw' ? await rawScan(path, offset, LIMIT) : await libScan(tool, path, offset, LIMIT)
  const ms = performance.now() - began
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage.rss())
  const maxRss = process.resourceUsage().maxRSS * 1024
  const growth = Math.max(peak - start, maxRss - start)
  process.stdout.write(`${JSON.stringify({ side, ms, start, peak, maxRss, growth, scan })}\n`)
}

if (args.child) {
  await child()
  process.exit(0)
}

// ---------------------------------------------------------------- parent mode

interface ChildReport {
  readonly side: Side
  readonly ms: number
  readonly start: number
  readonly peak: number
  readonly maxRss: number
  readonly growth: number
  readonly scan: Scan
}

const quick = args.quick
const size = quick ? { lines: 200_000, reps: 5, bigMiB: 128 } : { lines: 1_000_000, reps: 15, bigMiB: 1024 }
const windowOffset = size.lines - 9_999 // 990,001 for a million lines
const self = fileURLToPath(import.meta.url)
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const command = `node bench/dist/read.js${quick ? ' --quick' : ''}${args.json !== undefined ? ` --json ${args.json}` : ''}`

function runChild(side: Side, file: string, offset: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [self, '--child', '--side', side, '--file', file, '--offset', String(offset)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    proc.stdout.setEncoding('utf8')
    proc.stdout.on('data', (chunk: string) => (out += chunk))
    proc.on('error', reject)
    proc.on('close', (code) => {
      if (code !== 0) reject(new Error(`child ${side} exited with ${code}`))
      else resolve(JSON.parse(out) as ChildReport)
    })
  })
}

/** `lines` numbered lines of exactly 60 bytes (59 + newline), written in 1 MiB-ish batches. */
async function writeNumbered(path: string, lines: number): Promise<void> {
  const out = createWriteStream(path)
  const pad = ' lorem ipsum dolor sit amet consectetur adipiscing elit'
  for (let n = 1; n <= lines;) {
    let batch = ''
    for (let i = 0; i < 16_000 && n <= lines; i++, n++) batch += `${`line ${n}`.padEnd(14)}${pad}`.slice(0, 59) + '\n'
    if (!out.write(batch)) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

/** `mib` MiB of 64-byte lines: one 1 MiB buffer written over and over. */
async function writeRepeated(path: string, mib: number): Promise<number> {
  const line = `${'x'.repeat(63)}\n`
  const buffer = Buffer.from(line.repeat(MiB / line.length))
  const out = createWriteStream(path)
  for (let i = 0; i < mib; i++) {
    if (!out.write(buffer)) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
  return (mib * MiB) / line.length
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function sameScan(a: Scan, b: Scan, what: string): void {
  if (a.total !== b.total || a.kept !== b.kept || a.first !== b.first || a.last !== b.last) {
    throw new Error(`${what}: raw and library disagree: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
  }
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] as string).length)))
  const line = (row: readonly string[]): string => `| ${row.map((cell, c) => cell.padEnd(widths[c] as number)).join(' | ')} |`
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n')
}

const environment = {
  node: process.version,
  platform: `${platform()} ${release()}`,
  cpus: availableParallelism(),
  cpuModel: cpus()[0]?.model ?? 'unknown',
  quick,
  command,
}
await mkdir(join(repoRoot, '.bench-tmp'), { recursive: true })
const root = await mkdtemp(join(repoRoot, '.bench-tmp', 'read-'))
console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} CPUs (${environment.cpuModel})`)
console.log(`$ ${command}\ndata under ${root}\n`)
const fmt = (n: number): string => n.toLocaleString('en-US')
const mib = (bytes: number): string => (bytes / MiB).toFixed(1)
try {
  // (a) the window of a million-line file: time, then memory
  const windowFile = join(root, 'lines.txt')
  process.stdout.write(`writing ${fmt(size.lines)} lines ... `)
  await writeNumbered(windowFile, size.lines)
  console.log('done')
  const tool = readToolFor(root)
  const times: Record<Side, number[]> = { raw: [], lib: [] }
  const cpu: Record<Side, number[]> = { raw: [], lib: [] }
  let reference: Scan | undefined
  process.stdout.write(`window ${fmt(windowOffset)}–${fmt(windowOffset + LIMIT - 1)}: warm-up + ${size.reps} reps per side ... `)
  for (let rep = 0; rep <= size.reps; rep++) {
    for (const side of SIDES) {
      const cpuBefore = process.cpuUsage()
      const began = performance.now()
      const scan = side === 'raw' ? await rawScan(windowFile, windowOffset, LIMIT) : await libScan(tool, windowFile, windowOffset, LIMIT)
      const ms = performance.now() - began
      const used = process.cpuUsage(cpuBefore)
      if (reference === undefined) reference = scan
      sameScan(reference, scan, `window (${side})`)
      if (rep > 0) {
        times[side].push(ms)
        cpu[side].push((used.user + used.system) / 1000)
      }
    }
  }
  if (reference?.kept !== LIMIT || reference.total !== size.lines) throw new Error(`unexpected window ${JSON.stringify(reference)}`)
  const rawMedian = median(times.raw)
  const libMedian = median(times.lib)
  const ratio = libMedian / rawMedian
  const cpuRatio = median(cpu.lib) / median(cpu.raw)
  console.log(`${ratio.toFixed(2)}×`)
  process.stdout.write('window RSS, one fresh child per side ... ')
  const windowMem = { raw: await runChild('raw', windowFile, windowOffset), lib: await runChild('lib', windowFile, windowOffset) }
  sameScan(windowMem.raw.scan, windowMem.lib.scan, 'window RSS run')
  console.log('done')
  await rm(windowFile)

  // (b) the last window of a 1 GiB file, memory only (plus one timing per side)
  const bigFile = join(root, 'big.txt')
  process.stdout.write(`writing ${size.bigMiB} MiB ... `)
  const bigLines = await writeRepeated(bigFile, size.bigMiB)
  console.log('done')
  const bigOffset = bigLines - LIMIT + 1
  process.stdout.write(`last window of ${size.bigMiB} MiB (lines ${fmt(bigOffset)}–${fmt(bigLines)}), one fresh child per side ... `)
  const bigMem = { raw: await runChild('raw', bigFile, bigOffset), lib: await runChild('lib', bigFile, bigOffset) }
  sameScan(bigMem.raw.scan, bigMem.lib.scan, 'big file')
  if (bigMem.lib.scan.kept !== LIMIT || bigMem.lib.scan.total !== bigLines) throw new Error(`unexpected window ${JSON.stringify(bigMem.lib.scan)}`)
  console.log('done')
  await rm(bigFile)

  const windowName = `window ${fmt(windowOffset)}–${fmt(windowOffset + LIMIT - 1)} of ${fmt(size.lines)} lines (${mib(size.lines * 60)} MiB)`
  const bigName = `last window of ${size.bigMiB} MiB (${fmt(bigLines)} lines)`
  const rssOk = (r: ChildReport): string => (r.growth < RSS_TARGET_MIB * MiB ? 'yes' : 'NO')
  const results = {
    window: {
      rawMs: times.raw,
      libMs: times.lib,
      rawCpuMs: cpu.raw,
      libCpuMs: cpu.lib,
      rawMedian,
      libMedian,
      ratio,
      target: TIME_TARGET,
      ok: ratio <= TIME_TARGET,
      memory: windowMem,
    },
    big: { mib: size.bigMiB, lines: bigLines, memory: bigMem, ok: bigMem.lib.growth < RSS_TARGET_MIB * MiB },
  }
  console.log(`\n$ ${command}\n`)
  console.log(
    table([
      ['measure', 'raw', 'seamfs', 'ratio', 'target', 'ok'],
      [
        `${windowName}: median ms`,
        rawMedian.toFixed(1),
        libMedian.toFixed(1),
        `${ratio.toFixed(2)}×`,
        `≤ ${TIME_TARGET.toFixed(2)}×`,
        results.window.ok ? 'yes' : 'NO',
      ],
      [`${windowName}: median CPU ms (user+sys)`, median(cpu.raw).toFixed(1), median(cpu.lib).toFixed(1), `${cpuRatio.toFixed(2)}×`, '', ''],
      [`${windowName}: peak RSS growth MiB`, mib(windowMem.raw.growth), mib(windowMem.lib.growth), '', `< ${RSS_TARGET_MIB} MiB`, rssOk(windowMem.lib)],
      [`${bigName}: peak RSS growth MiB`, mib(bigMem.raw.growth), mib(bigMem.lib.growth), '', `< ${RSS_TARGET_MIB} MiB`, rssOk(bigMem.lib)],
      [`${bigName}: ms (one run)`, bigMem.raw.ms.toFixed(0), bigMem.lib.ms.toFixed(0), `${(bigMem.lib.ms / bigMem.raw.ms).toFixed(2)}×`, '', ''],
    ]),
  )
  const range = (ms: readonly number[]): string => `${Math.min(...ms).toFixed(1)}–${Math.max(...ms).toFixed(1)}`
  console.log(`\nper-repetition spread (ms, min–max): raw ${range(times.raw)} · seamfs ${range(times.lib)}`)
  console.log(
    `child RSS at start (MiB): window raw ${mib(windowMem.raw.start)} · seamfs ${mib(windowMem.lib.start)}; big raw ${mib(bigMem.raw.start)} · seamfs ${mib(bigMem.lib.start)}`,
  )
  if (args.json !== undefined) {
    await writeFile(args.json, `${JSON.stringify({ environment, results }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await rm(root, { recursive: true, force: true })
}
