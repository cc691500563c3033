/**
 * seamfs side by side with the libraries an agent's file tools would otherwise
 * use, on the jobs those tools do, each against the same job done
 * with raw calls in the same run (the "limit").
 *
 * Jobs (sizes of the full run; `--quick` shrinks them for a ~30 s smoke run):
 *   write   1,000 creates + 1,000 overwrites of 4 KiB; the limit and seamfs are
 *           durable (temp + fsync + rename + dir fsync), peers write as they do
 *   edit    200 unique edits (20 files of 1 MiB, 10 markers each); the limit is
 *           readFile + exactly-once indexOf + splice + the durable write
 *   list    one 10,000-entry directory, names + types, sorted (time per listing)
 *   memory  10,000 × 200 B files written, read and edited (limit: raw memfs `Volume`)
 *   read    1,000 reads of one 200 B file
 *   window  lines 500,001–502,000 of a 1,000,000-line file (60 B a line)
 *   calls   per tool call, where the time goes: the contract call, the diff, the rest (read,
 *           write and edit; one-line changes of 1 MiB and 64 MiB files): ./peers/calls.ts
 * Every job but memory has a "seamfs tools" column next to the contract's: the same job through
 * `createFileToolsByName` (default fence, read-before-write policy, the model's text built).
 * The disk columns are in ./peers/disk.ts, the memory ones in ./peers/memory.ts;
 * each file says what every peer call does and how it was made comparable.
 * A peer marked "(not durable)" does not fsync (checked in its code).
 *
 * Method: each job runs in a fresh process (`node bench/dist/peers.js --job
 * <name> --worker`), with every column of the job in it: 1 warm-up + 6
 * measured rounds, each round running every column once (the first column
 * rotating, the order reversed every other round, each column on a heap settled
 * by a full collection, untimed). A cell is the ratio of the column's median to the limit's median,
 * with the range of (round time / limit median) in brackets. A peer that cannot
 * be loaded or throws shows as "n/a (reason)". Data lives under
 * <repo>/.bench-tmp and is removed at the end.
 *
 * Usage: node bench/dist/peers.js [--quick] [--only write,edit,list,memory,read,window,calls] [--json FILE]
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, platform, release } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { breakdownTable, callsJob } from './peers/calls.js'
import { editJob, listJob, readJob, writeJob } from './peers/disk.js'
import { FULL, QUICK, type CallBreakdown, type JobResult, type Sizes } from './peers/harness.js'
import { memoryJob } from './peers/memory.js'
import { table } from './peers/table.js'
import { windowJob } from './peers/window.js'

type Result = JobResult & { readonly breakdown?: CallBreakdown[] }

const JOBS: Record<string, (dataDir: string, size: Sizes) => Promise<Result>> = {
  write: writeJob,
  edit: editJob,
  list: listJob,
  memory: (_dataDir, size) => memoryJob(size),
  read: readJob,
  window: windowJob,
  calls: callsJob,
}
const RESULT_PREFIX = 'PEERS-RESULT '

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    json: { type: 'string' },
    job: { type: 'string' },
    worker: { type: 'boolean', default: false },
  },
})
const size = args.quick ? QUICK : FULL
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const script = fileURLToPath(import.meta.url)

/** Worker: one job, all its columns, result as one JSON line on stdout. */
async function worker(name: string): Promise<void> {
  const job = JOBS[name]
  if (job === undefined) throw new Error(`--job: unknown job ${name}`)
  await mkdir(join(repoRoot, '.bench-tmp'), { recursive: true })
  const dataDir = await mkdtemp(join(repoRoot, '.bench-tmp', `peers-${name}-`))
  try {
    const result = await job(dataDir, size)
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** Runs one job in a fresh process; a crash becomes a result whose columns say why. */
function spawnJob(name: string): Promise<Result | { job: string; error: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', script, '--job', name, '--worker', ...(args.quick ? ['--quick'] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()))
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))
      if (code === 0 && line !== undefined) resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as Result)
      else resolve({ job: name, error: `worker exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' ').slice(0, 200)}` })
    })
  })
}

async function driver(): Promise<void> {
  const chosen = args.only === undefined ? Object.keys(JOBS) : args.only.split(',').map((n) => n.trim())
  const unknown = chosen.filter((n) => !(n in JOBS))
  if (unknown.length > 0) throw new Error(`--only: unknown job(s) ${unknown.join(', ')}; choose from ${Object.keys(JOBS).join(', ')}`)
  const load = (): string =>
    loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')
  const environment = {
    node: process.version,
    platform: `${platform()} ${release()}`,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAtStart: loadavg(),
    quick: args.quick,
    rounds: size.rounds,
  }
  console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} cores (${environment.cpuModel})`)
  console.log(`load average at start: ${load()}${args.quick ? ' · --quick (smaller sizes)' : ''}`)
  console.log(
    `each job in a fresh process: 1 warm-up + ${size.rounds} measured rounds, columns interleaved per round (order reversed every other round), each on a heap settled by a full collection\n`,
  )
  const results: Array<Result | { job: string; error: string }> = []
  for (const name of chosen) {
    process.stdout.write(`${name} ... `)
    const started = Date.now()
    const result = await spawnJob(name)
    results.push(result)
    console.log('error' in result ? `failed (${result.error})` : `${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
  const breakdown = results.flatMap((r) => ('breakdown' in r && r.breakdown !== undefined ? r.breakdown : []))
  console.log(`\n${table(results.filter((r) => !('breakdown' in r)))}\n`)
  console.log('cell: median / limit median, (range of round / limit median); limit: median ms (min–max)')
  console.log("tools / contract: median (range) of the two columns' ratio within each round")
  if (breakdown.length > 0) {
    console.log(`\nper tool call (medians; rest = tool − contract − diff: fence, checks, policy, result):\n\n${breakdownTable(breakdown)}`)
  }
  console.log(`load average at end: ${load()}`)
  if (args.json !== undefined) {
    await writeFile(args.json, `${JSON.stringify({ environment, loadAtEnd: loadavg(), results }, null, 2)}\n`)
    console.log(`results written to ${args.json}`)
  }
}

if (args.worker) {
  if (args.job === undefined) throw new Error('--worker needs --job <name>')
  await worker(args.job)
} else {
  await driver()
}
