/**
 * What watching a store costs a call (issue 35): the same jobs on the bare store, through an
 * `EventedFileSystem` with no listener (the target: within noise of bare), with one cheap listener,
 * with an `AuditLog` attached (a JSON line written whole per change), through a `TracedFileSystem`
 * with no OpenTelemetry SDK registered (the API's no-op), and with the SDK recording every span and
 * metric (in-memory exporter, spans dropped after each batch), same run.
 *
 * Stores: memory (where a layer's own cost shows most) and the local disk. Jobs, each a batch of
 * `n` calls on one file per call: `writeText` of 4 KiB (an overwrite), `editText` of one line of a
 * 4 KiB file, and `readText` of 4 KiB (a read passes through the layer untouched by events).
 *
 * Method: one untimed warm-up batch per side, then the three sides alternate, `reps` batches each
 * (5, `--quick` 3); the table shows the median per call (µs) and the ratio to bare.
 *
 * Usage: node bench/dist/events.js [--quick] [--json FILE]
 */
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { metrics, trace } from '@opentelemetry/api'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { AuditLog, EventedFileSystem, type FileSystem, type FsEvent, type FsTarget } from '@seamfs/core'
import { TracedFileSystem } from '@seamfs/core/opentelemetry'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { environment, machineLine, markdownTable } from './report.js'

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'string' } } })
const REPS = args.quick ? 3 : 5
const CALLS = args.quick ? 200 : 1000
const LINE = 'the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz\n'
const TEXT = LINE.repeat(Math.ceil(4096 / LINE.length))

type Side = 'bare' | 'evented, no listener' | 'evented, one listener' | 'audit log' | 'traced, no SDK' | 'traced, SDK'
const SIDES: readonly Side[] = ['bare', 'evented, no listener', 'evented, one listener', 'audit log', 'traced, no SDK', 'traced, SDK']

class HeldReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

interface Job {
  readonly name: string
  readonly run: (fs: FileSystem, targets: readonly FsTarget[], round: number) => Promise<unknown>
}

const JOBS: readonly Job[] = [
  { name: 'writeText 4 KiB', run: (fs, targets, round) => Promise.all(targets.map((t) => fs.writeText(t, `${round}\n${TEXT}`))) },
  {
    name: 'editText one line',
    run: (fs, targets, round) => Promise.all(targets.map((t) => fs.editText(t, { oldString: `${round}\n`, newString: `${round + 1}\n`, replaceAll: false }))),
  },
  { name: 'readText 4 KiB', run: (fs, targets) => Promise.all(targets.map((t) => fs.readText(t))) },
]

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

async function measure(store: string, base: FileSystem, logDir: string): Promise<string[][]> {
  let seen = 0
  const listened = new EventedFileSystem(base)
  listened.on((e: FsEvent) => {
    seen += e.kind === 'failed' ? 0 : 1
  })
  const audited = new EventedFileSystem(base)
  const log = new AuditLog(join(logDir, `${store}-audit.jsonl`))
  audited.on(log.listener)
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const meterProvider = new MeterProvider({ readers: [new HeldReader()] })
  // Nothing is registered globally: the side without an SDK gets the API's no-op tracer and meter.
  trace.disable()
  metrics.disable()
  const sides: Record<Side, FileSystem> = {
    bare: base,
    'evented, no listener': new EventedFileSystem(base),
    'evented, one listener': listened,
    'audit log': audited,
    'traced, no SDK': new TracedFileSystem(base),
    'traced, SDK': new TracedFileSystem(base, { tracerProvider, meterProvider }),
  }
  const rows: string[][] = []
  // Calls go in batches of 50 at once, as an agent harness with several sessions would make them.
  const targets = await Promise.all(Array.from({ length: 50 }, (_, i) => base.resolve(`f${i}.txt`)))
  for (const job of JOBS) {
    const times = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>
    let round = 0
    for (const t of targets) await base.writeText(t, `${round}\n${TEXT}`)
    const batch = async (fs: FileSystem): Promise<number> => {
      const started = performance.now()
      for (let i = 0; i < CALLS / targets.length; i++) await job.run(fs, targets, round++)
      const perCall = ((performance.now() - started) * 1000) / CALLS
      exporter.reset()
      return perCall
    }
    for (const side of SIDES) await batch(sides[side])
    for (let r = 0; r < REPS; r++) for (const side of SIDES) times[side].push(await batch(sides[side]))
    const bare = median(times.bare)
    rows.push([store, job.name, ...SIDES.map((side) => `${median(times[side]).toFixed(1)} µs (×${(median(times[side]) / bare).toFixed(2)})`)])
  }
  if (seen === 0) throw new Error('the listener saw no event: the measured side did not emit')
  log.close()
  if (statSync(log.path).size === 0) throw new Error('the audit log wrote no line: the measured side did not log')
  return rows
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(fileURLToPath(new URL('../../', import.meta.url)), '.bench-tmp-events-'))
  try {
    const logs = await mkdtemp(join(tmp, '..', '.bench-tmp-audit-'))
    const rows = [...(await measure('memory', new MemoryFileSystem({ cwd: '/b' }), logs)), ...(await measure('local', new LocalFileSystem({ cwd: tmp }), logs))]
    await rm(logs, { recursive: true, force: true })
    const env = environment({ calls: CALLS, reps: REPS })
    console.log(`# Watching a store: cost per call\n\n${machineLine(env)}\n`)
    console.log(markdownTable(['store', 'job', ...SIDES], rows))
    if (args.json !== undefined) {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(args.json, JSON.stringify({ env, rows }, null, 2))
    }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
