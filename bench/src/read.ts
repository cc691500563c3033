/**
 * The `read` tool on a large file against two raw `node:fs` scans, same job, same run.
 *
 * Jobs (sizes of the full run; `--quick` shrinks them for a smoke run):
 *   window  lines 990,001–992,000 of a 1,000,000-line file (60 B a line, ~60 MB):
 *           cold time (a fresh process, one call; target ≤ 1.2× the byte scan),
 *           warm time (target ≤ 1.0× the byte scan), peak RSS growth (< 32 MiB)
 *   1 GiB   the last 2,000-line window of a 1 GiB file (16,777,216 lines of 64 B):
 *           peak RSS growth (target < 32 MiB); wall time reported, no target
 *
 * Library side: `createFileTools({ fs: new LocalFileSystem(...) })`'s `read`
 * with `{ file_path, offset, limit: 2000 }`. Both files are above the default
 * readStreamMinSize (10 MiB), so the tool streams the bytes (256 KiB chunks),
 * validates them as UTF-8, counts lines on bytes and decodes only the window.
 * readMaxBytes is raised to 256 KiB so the byte cap does not cut the 2,000
 * lines short; every other setting is the default, and the envelope is built.
 * Two raw sides, each also keeping the window's lines and counting every line:
 * - byte scan, the limit: one reused 256 KiB buffer filled by `FileHandle#read`,
 *   `\n` found with `Buffer#indexOf`, only the window's lines decoded (no
 *   UTF-8 validation at all);
 * - raw text, today's first baseline: `createReadStream(path, { encoding:
 *   'utf8', highWaterMark: 64 KiB })`, lines split on `\n` (a partial last
 *   line carried to the next chunk).
 * All sides must agree on the window's first and last line and the line count.
 *
 * Method: warm — one untimed warm-up per side, then the sides alternate in this
 * process (byte scan, seamfs, raw text, ...); the table shows the medians
 * (performance.now) and the ratios; the process CPU time of the same runs
 * (process.cpuUsage, all threads) is shown too, as wall time on a busy machine
 * also measures the scheduler. Cold — each side runs once in each of N fresh
 * children (`node bench/dist/read.js --child ...`), alternating; a child times
 * only the call (after imports and setup); the table shows the medians. Memory —
 * a child takes its RSS after imports and setup, samples
 * process.memoryUsage.rss() every 2 ms during the read, and also reads
 * process.resourceUsage().maxRSS at the end; growth is the larger of (highest
 * sample − start) and (maxRSS − start). Data lives under <repo>/.bench-tmp and
 * is removed at the end.
 *
 * Usage: node bench/dist/read.js [--quick] [--json FILE]
 */
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, platform, release } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileTools, type FileTool, type ReadValue } from '@seamfs/tools'

type Side = 'raw' | 'bytes' | 'lib'
const SIDES: readonly Side[] = ['bytes', 'lib', 'raw']
const MiB = 1024 * 1024
const LIMIT = 2000
const READ_MAX_BYTES = 256 * 1024
const TIME_TARGET = 1.2
/** Against the byte-scan limit: cold (a fresh process, one call) and warm (same process, after a warm-up). */
const COLD_TARGET = 1.2
const WARM_TARGET = 1.0
/** The chunk the byte scan reads: LocalFileSystem's stream chunk. */
const BYTE_CHUNK = 256 * 1024
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

/**
 * The byte-scan limit: read bytes into one reused buffer, count `\n` on bytes
 * (`Buffer#indexOf`), decode only the window's lines. No UTF-8 validation.
 */
async function byteScan(path: string, offset: number, limit: number): Promise<Scan> {
  const end = offset + limit - 1
  const kept: string[] = []
  let pieces: Buffer[] = []
  let number = 1
  let partial = false
  const file = await open(path)
  try {
    const buffer = Buffer.allocUnsafe(BYTE_CHUNK)
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, BYTE_CHUNK, null)
      if (bytesRead === 0) break
      const chunk = bytesRead === BYTE_CHUNK ? buffer : buffer.subarray(0, bytesRead)
      for (let from = 0; from < chunk.length;) {
        const newline = chunk.indexOf(10, from)
        if (number < offset || number > end) {
          // A line outside the window: only counted.
          partial = newline === -1
          if (partial) break
          number++
          from = newline + 1
          continue
        }
        const stop = newline === -1 ? chunk.length : newline
        if (stop > from) pieces.push(Buffer.from(chunk.subarray(from, stop)))
        partial = newline === -1
        if (partial) break
        kept.push(Buffer.concat(pieces).toString('utf8'))
        pieces = []
        number++
        from = newline + 1
      }
    }
  } finally {
    await file.close()
  }
  if (partial) {
    if (number >= offset && number <= end) kept.push(Buffer.concat(pieces).toString('utf8'))
    number++
  }
  return { total: number - 1, kept: kept.length, first: kept[0], last: kept.at(-1) }
}

function scanWith(side: Side, tool: FileTool, path: string, offset: number): Promise<Scan> {
  if (side === 'raw') return rawScan(path, offset, LIMIT)
  if (side === 'bytes') return byteScan(path, offset, LIMIT)
  return libScan(tool, path, offset, LIMIT)
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
  const scan = await scanWith(side, tool, path, offset)
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
const size = quick ? { lines: 200_000, reps: 5, coldReps: 3, bigMiB: 128 } : { lines: 1_000_000, reps: 15, coldReps: 7, bigMiB: 1024 }
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
  // (a) the window of a million-line file: warm time, cold time (fresh children), memory
  const windowFile = join(root, 'lines.txt')
  process.stdout.write(`writing ${fmt(size.lines)} lines ... `)
  await writeNumbered(windowFile, size.lines)
  console.log('done')
  const tool = readToolFor(root)
  const perSide = (): Record<Side, number[]> => ({ raw: [], bytes: [], lib: [] })
  const times = perSide()
  const cpu = perSide()
  let reference: Scan | undefined
  process.stdout.write(`window ${fmt(windowOffset)}–${fmt(windowOffset + LIMIT - 1)}, warm: warm-up + ${size.reps} reps per side ... `)
  for (let rep = 0; rep <= size.reps; rep++) {
    for (const side of SIDES) {
      const cpuBefore = process.cpuUsage()
      const began = performance.now()
      const scan = await scanWith(side, tool, windowFile, windowOffset)
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
  const warm = { raw: median(times.raw), bytes: median(times.bytes), lib: median(times.lib) }
  const warmCpu = { raw: median(cpu.raw), bytes: median(cpu.bytes), lib: median(cpu.lib) }
  console.log(`${(warm.lib / warm.bytes).toFixed(2)}× the byte scan`)
  process.stdout.write(`window, cold: ${size.coldReps} fresh children per side, alternating ... `)
  const cold: Record<Side, ChildReport[]> = { raw: [], bytes: [], lib: [] }
  for (let rep = 0; rep < size.coldReps; rep++) {
    for (const side of SIDES) {
      const report = await runChild(side, windowFile, windowOffset)
      sameScan(reference, report.scan, `cold window (${side})`)
      cold[side].push(report)
    }
  }
  const coldMs = { raw: median(cold.raw.map((r) => r.ms)), bytes: median(cold.bytes.map((r) => r.ms)), lib: median(cold.lib.map((r) => r.ms)) }
  const coldGrowth = (side: Side): number => median(cold[side].map((r) => r.growth))
  console.log(`${(coldMs.lib / coldMs.bytes).toFixed(2)}× the byte scan`)
  await rm(windowFile)

  // (b) the last window of a 1 GiB file, memory only (plus one timing per side)
  const bigFile = join(root, 'big.txt')
  process.stdout.write(`writing ${size.bigMiB} MiB ... `)
  const bigLines = await writeRepeated(bigFile, size.bigMiB)
  console.log('done')
  const bigOffset = bigLines - LIMIT + 1
  process.stdout.write(`last window of ${size.bigMiB} MiB (lines ${fmt(bigOffset)}–${fmt(bigLines)}), one fresh child per side ... `)
  const bigMem = {
    raw: await runChild('raw', bigFile, bigOffset),
    bytes: await runChild('bytes', bigFile, bigOffset),
    lib: await runChild('lib', bigFile, bigOffset),
  }
  sameScan(bigMem.raw.scan, bigMem.lib.scan, 'big file')
  sameScan(bigMem.bytes.scan, bigMem.lib.scan, 'big file')
  if (bigMem.lib.scan.kept !== LIMIT || bigMem.lib.scan.total !== bigLines) throw new Error(`unexpected window ${JSON.stringify(bigMem.lib.scan)}`)
  console.log('done')
  await rm(bigFile)

  const windowName = `window ${fmt(windowOffset)}–${fmt(windowOffset + LIMIT - 1)} of ${fmt(size.lines)} lines (${mib(size.lines * 60)} MiB)`
  const bigName = `last window of ${size.bigMiB} MiB (${fmt(bigLines)} lines)`
  const rssOk = (growth: number): string => (growth < RSS_TARGET_MIB * MiB ? 'yes' : 'NO')
  const x = (n: number): string => `${n.toFixed(2)}×`
  const results = {
    window: {
      warm: { ms: times, cpuMs: cpu, medians: warm, cpuMedians: warmCpu, vsBytes: warm.lib / warm.bytes, vsRaw: warm.lib / warm.raw },
      cold: { reports: cold, medians: coldMs, vsBytes: coldMs.lib / coldMs.bytes, vsRaw: coldMs.lib / coldMs.raw },
      targets: { cold: COLD_TARGET, warm: WARM_TARGET, oldRaw: TIME_TARGET },
      ok: coldMs.lib / coldMs.bytes <= COLD_TARGET && warm.lib / warm.bytes <= WARM_TARGET,
    },
    big: { mib: size.bigMiB, lines: bigLines, memory: bigMem, ok: bigMem.lib.growth < RSS_TARGET_MIB * MiB },
  }
  const timeRow = (what: string, m: Record<Side, number>, target: number): string[] => [
    `${windowName}: ${what}`,
    m.raw.toFixed(1),
    m.bytes.toFixed(1),
    m.lib.toFixed(1),
    x(m.lib / m.raw),
    x(m.lib / m.bytes),
    target > 0 ? `≤ ${target.toFixed(2)}× limit` : '',
    target > 0 ? (m.lib / m.bytes <= target ? 'yes' : 'NO') : '',
  ]
  const memRow = (what: string, m: Record<Side, number>): string[] => [
    what,
    mib(m.raw),
    mib(m.bytes),
    mib(m.lib),
    '',
    '',
    `< ${RSS_TARGET_MIB} MiB`,
    rssOk(m.lib),
  ]
  console.log(`\n$ ${command}\n`)
  console.log(
    table([
      ['measure', 'raw text', 'byte scan (limit)', 'seamfs', 'vs raw', 'vs limit', 'target', 'ok'],
      timeRow(`cold, median ms of ${size.coldReps} fresh processes (one call each)`, coldMs, COLD_TARGET),
      timeRow(`warm, median ms of ${size.reps}`, warm, WARM_TARGET),
      timeRow('warm, median CPU ms (user+sys)', warmCpu, 0),
      memRow(`${windowName}: peak RSS growth MiB (median, cold)`, { raw: coldGrowth('raw'), bytes: coldGrowth('bytes'), lib: coldGrowth('lib') }),
      memRow(`${bigName}: peak RSS growth MiB`, { raw: bigMem.raw.growth, bytes: bigMem.bytes.growth, lib: bigMem.lib.growth }),
      [
        `${bigName}: ms (one run, cold)`,
        bigMem.raw.ms.toFixed(0),
        bigMem.bytes.ms.toFixed(0),
        bigMem.lib.ms.toFixed(0),
        x(bigMem.lib.ms / bigMem.raw.ms),
        x(bigMem.lib.ms / bigMem.bytes.ms),
        '',
        '',
      ],
    ]),
  )
  const range = (ms: readonly number[]): string => `${Math.min(...ms).toFixed(1)}–${Math.max(...ms).toFixed(1)}`
  const coldRange = (side: Side): string => range(cold[side].map((r) => r.ms))
  console.log(`\nwarm spread (ms, min–max): raw ${range(times.raw)} · byte scan ${range(times.bytes)} · seamfs ${range(times.lib)}`)
  console.log(`cold spread (ms, min–max): raw ${coldRange('raw')} · byte scan ${coldRange('bytes')} · seamfs ${coldRange('lib')}`)
  console.log(`child RSS at start (MiB): big raw ${mib(bigMem.raw.start)} · byte scan ${mib(bigMem.bytes.start)} · seamfs ${mib(bigMem.lib.start)}`)
  if (args.json !== undefined) {
    await writeFile(args.json, `${JSON.stringify({ environment, results }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await rm(root, { recursive: true, force: true })
}
