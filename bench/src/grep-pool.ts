/**
 * The grep tool on one process-wide pool of regex threads against one thread per
 * call (the behaviour before the pool), same tool, same files, same run.
 *
 * Files: 64 files of 100 lines (about 5 KB each) in a memory backend, four directories. Patterns:
 * 64 of them (`line <n>\b`), each matching one line of every file: 64 matches per grep.
 *
 * Two sides, each the real `grep` tool from `createFileToolsByName`:
 * - per-call: the old behaviour: a new `Worker` per grep, started on its first chunk and terminated
 *   when the grep ends, running the same worker code (`WORKER_SOURCE`). The bench installs it as the
 *   process's regex pool (`processWide`, under the pool's key) before any grep;
 * - pool: the shared pool, at most max(2, cores) threads, idle ones ending after 10 s.
 *
 * Measures, per side, in a fresh child (`--expose-gc`): after a warm-up (3 greps, 3 reads) and a GC,
 * - burst: 64 greps started at once: the extra OS threads (the peak of `Threads:` in
 *   /proc/self/status, sampled every millisecond and at each grep's end, minus the count before the
 *   first grep of the child), the peak RSS (VmHWM, reset through /proc/self/clear_refs just before;
 *   and its growth over the RSS then), each grep's latency (median and slowest) and the burst's wall
 *   time; the burst's answers must be the same on both sides;
 * - one grep: the median of sequential greps, next to reading the same 64 files with `readText`
 *   (sequential, targets resolved beforehand; median of as many passes).
 * Sides alternate, medians of `reps` children each. Linux only for the thread and RSS figures.
 *
 * Usage: node bench/dist/grep-pool.js [--quick] [--json FILE]
 */
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import type { FsTarget } from '@seamfs/core'
import { processWide } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'
// The pool's internals are not part of the package's API: the bench reads them from the built tree.
import { REGEX_POOL_KEY, WORKER_SOURCE, type ChunkMessage, type ChunkReply, type RegexPool } from '../../packages/tools/dist/grep-worker.js'
import { environment, machineLine, markdownTable, runNodeChild } from './report.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    child: { type: 'boolean', default: false },
    side: { type: 'string' },
  },
})

const quick = args.quick === true
const SIDES = ['per-call', 'pool'] as const
type Side = (typeof SIDES)[number]
const FILES = 64
const LINES = 100
const BURST = 64
const REPS = quick ? 1 : 3
/** Sequential greps (and read passes) per child. */
const SINGLES = quick ? 10 : 40
const CHILD_TIMEOUT_MS = 120_000
const MiB = 1024 * 1024

/** What a child reports. */
interface Report {
  readonly side: Side
  /** Peak OS threads during the burst, minus the count before the child's first grep (`null` without /proc). */
  readonly extraThreads: number | null
  /** VmHWM during the burst, bytes. */
  readonly peakRss: number | null
  /** VmHWM minus the RSS just before the burst, bytes. */
  readonly rssGrowth: number | null
  readonly latencyMedian: number
  readonly latencyMax: number
  readonly burstMs: number
  /** A hash of the burst's answers (same on both sides). */
  readonly answers: string
  readonly grepMs: number
  readonly readMs: number
}

/**
 * The old behaviour, as a pool: one thread per search, started on its first chunk and terminated
 * when the search ends (the search's `RegexWorker` aborts the signal it passes on dispose).
 */
interface PerCallThread {
  readonly worker: Worker
  pending: { resolve: (r: ChunkReply) => void; reject: (e: Error) => void } | undefined
}

class PerCallPool {
  readonly #threads = new WeakMap<AbortSignal, PerCallThread>()

  run(message: ChunkMessage, signal?: AbortSignal): Promise<ChunkReply> {
    if (signal === undefined || signal.aborted) return Promise.reject(new Error('regex search abandoned'))
    let thread = this.#threads.get(signal)
    if (thread === undefined) {
      const started: PerCallThread = { worker: new Worker(WORKER_SOURCE, { eval: true }), pending: undefined }
      started.worker.on('message', (reply: ChunkReply) => {
        const pending = started.pending
        started.pending = undefined
        pending?.resolve(reply)
      })
      started.worker.on('error', (err: Error) => started.pending?.reject(new Error(`regex worker failed: ${err.message}`)))
      signal.addEventListener(
        'abort',
        () => {
          started.pending?.reject(new Error('regex search abandoned'))
          started.pending = undefined
          void started.worker.terminate().catch(() => undefined)
        },
        { once: true },
      )
      this.#threads.set(signal, started)
      thread = started
    }
    const current = thread
    return new Promise<ChunkReply>((resolve, reject) => {
      current.pending = { resolve, reject }
      current.worker.postMessage(message)
    })
  }
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
const paths = Array.from({ length: FILES }, (_, f) => `d${f % 4}/f${String(f).padStart(2, '0')}.txt`)
const content = (f: number): string =>
  Array.from({ length: LINES }, (_, n) => `f${f} line ${n + 1} ${WORDS[(f + n) % WORDS.length]} lorem ipsum dolor sit amet`).join('\n') + '\n'
const patterns = Array.from({ length: BURST }, (_, i) => `line ${i + 1}\\b`)

const status = (): string | undefined => {
  try {
    return readFileSync('/proc/self/status', 'utf8')
  } catch {
    return undefined
  }
}
const field = (name: string): number | null => {
  const value = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status() ?? '')?.[1]
  return value === undefined ? null : Number(value)
}
const threads = (): number | null => field('Threads')
const kib = (name: string): number | null => {
  const v = field(name)
  return v === null ? null : v * 1024
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function child(side: Side): Promise<Report> {
  if (side === 'per-call') processWide(REGEX_POOL_KEY, () => new PerCallPool() as unknown as RegexPool)
  const before = threads()
  const fs = new MemoryFileSystem({ cwd: '/w', files: Object.fromEntries(paths.map((p, f) => [p, content(f)])) })
  const tools = createFileToolsByName({ fs, config: { searchTimeoutMs: CHILD_TIMEOUT_MS } })
  const targets: FsTarget[] = await Promise.all(paths.map((p) => fs.resolve(p)))
  const grep = async (pattern: string): Promise<string> => {
    const r = await tools.grep.execute({ pattern })
    if (r.isError === true) throw new Error(r.text)
    return r.text
  }
  const readAll = async (): Promise<void> => {
    for (const target of targets) await fs.readText(target)
  }
  for (let i = 0; i < 3; i++) {
    await grep(patterns[i] as string)
    await readAll()
  }
  // The warm-up's per-call threads end asynchronously: let them go before the burst.
  for (let i = 0; i < 200 && side === 'per-call' && before !== null && (threads() ?? 0) > before; i++) await sleep(10)
  ;(globalThis as { gc?: () => void }).gc?.()
  await sleep(20)

  let peakable = true
  try {
    writeFileSync('/proc/self/clear_refs', '5')
  } catch {
    peakable = false
  }
  const rssBefore = process.memoryUsage.rss()
  let peakThreads = threads()
  const sample = (): void => {
    const now = threads()
    if (now !== null && (peakThreads === null || now > peakThreads)) peakThreads = now
  }
  const sampler = setInterval(sample, 1)
  const began = performance.now()
  const latencies: number[] = []
  const texts = await Promise.all(
    patterns.map(async (pattern) => {
      const text = await grep(pattern)
      latencies.push(performance.now() - began)
      sample()
      return text
    }),
  )
  const burstMs = performance.now() - began
  clearInterval(sampler)
  sample()
  const hwm = peakable ? kib('VmHWM') : null

  const grepTimes: number[] = []
  const readTimes: number[] = []
  for (let i = 0; i < SINGLES; i++) {
    let t = performance.now()
    await grep(patterns[i % patterns.length] as string)
    grepTimes.push(performance.now() - t)
    t = performance.now()
    await readAll()
    readTimes.push(performance.now() - t)
  }
  return {
    side,
    extraThreads: before === null || peakThreads === null ? null : peakThreads - before,
    peakRss: hwm,
    rssGrowth: hwm === null ? null : Math.max(0, hwm - rssBefore),
    latencyMedian: median(latencies),
    latencyMax: Math.max(...latencies),
    burstMs,
    answers: createHash('sha256').update(texts.join('\0')).digest('hex').slice(0, 12),
    grepMs: median(grepTimes),
    readMs: median(readTimes),
  }
}

async function runChild(side: Side): Promise<Report> {
  const self = fileURLToPath(import.meta.url)
  const { code, signal, out } = await runNodeChild(['--expose-gc', self, '--child', '--side', side, ...(quick ? ['--quick'] : [])], CHILD_TIMEOUT_MS)
  if (code !== 0) throw new Error(`${side} child ended with ${signal ?? code}`)
  return JSON.parse(out) as Report
}

/** A column of the table: a figure of each child, shown as the median over a side's children. */
interface Metric {
  readonly name: string
  readonly pick: (r: Report) => number | null
  readonly digits: number
  readonly scale?: number
}

const METRICS: readonly Metric[] = [
  { name: 'extra threads', pick: (r) => r.extraThreads, digits: 0 },
  { name: 'peak RSS MiB', pick: (r) => r.peakRss, digits: 0, scale: MiB },
  { name: 'RSS growth MiB', pick: (r) => r.rssGrowth, digits: 0, scale: MiB },
  { name: 'grep p50 ms', pick: (r) => r.latencyMedian, digits: 1 },
  { name: 'grep max ms', pick: (r) => r.latencyMax, digits: 1 },
  { name: 'burst ms', pick: (r) => r.burstMs, digits: 1 },
  { name: 'one grep ms', pick: (r) => r.grepMs, digits: 2 },
  { name: 'readText ms', pick: (r) => r.readMs, digits: 2 },
]

if (args.child === true) {
  const report = await child(args.side as Side)
  // Exit at once: the per-call side's threads, and the pool's idle ones, are not waited for.
  process.stdout.write(JSON.stringify(report), () => process.exit(0))
} else {
  const command = `node bench/dist/grep-pool.js${quick ? ' --quick' : ''}${args.json !== undefined ? ` --json ${args.json}` : ''}`
  const env = environment({ quick, command })
  console.log(machineLine(env))
  console.log(`$ ${command}\n`)
  const bySide: Record<Side, Report[]> = { 'per-call': [], pool: [] }
  for (let rep = 0; rep < REPS; rep++) for (const side of SIDES) bySide[side].push(await runChild(side))
  const all = [...bySide['per-call'], ...bySide.pool]
  const sameAnswers = new Set(all.map((r) => r.answers)).size === 1
  const fmt = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '–')
  const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '–')
  const value = (side: Side, metric: Metric): number => median(bySide[side].map((r) => metric.pick(r) ?? Number.NaN)) / (metric.scale ?? 1)
  const [grepMetric, readMetric] = [METRICS.find((mt) => mt.name === 'one grep ms'), METRICS.find((mt) => mt.name === 'readText ms')] as [Metric, Metric]
  const header = ['side', ...METRICS.map((mt) => mt.name), 'grep/read']
  const rows = SIDES.map((side) => [side, ...METRICS.map((mt) => fmt(value(side, mt), mt.digits)), ratio(value(side, grepMetric), value(side, readMetric))])
  rows.push(['pool/per-call', ...METRICS.map((mt) => ratio(value('pool', mt), value('per-call', mt))), ''])
  console.log(markdownTable(header, rows))
  console.log(
    `\nburst: ${BURST} greps at once over ${FILES} files of ${LINES} lines (memory backend); extra threads: peak OS threads minus those before the first grep;` +
      ` one grep: median of ${SINGLES} sequential greps, next to readText of the same ${FILES} files. Medians of ${REPS} fresh child(ren) per side.` +
      ` Burst answers identical on both sides: ${sameAnswers ? 'yes' : 'NO'}.`,
  )
  if (!sameAnswers) process.exitCode = 1
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify({ environment: env, reports: all }, null, 2)}\n`)
}
