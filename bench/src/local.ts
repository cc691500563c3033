/**
 * LocalFileSystem against raw `node:fs/promises`, same jobs, same run.
 *
 * Jobs (sizes of the full run; `--quick` shrinks them for a smoke run):
 *   create 1,000 × 4 KiB   durable creates into a fresh directory per repetition
 *   overwrite 1,000 × 4 KiB durable unconditional overwrites of existing files
 *   edit 200 × 1 MiB        unique literal edits (20 files of 1 MiB, 10 markers each)
 *   list 10,000 entries     one directory of plain files, sorted listing
 *
 * Raw baselines: a durable write is open(temp, 'wx', 0o600) + write + fsync +
 * close + rename + open(dir) + fsync + close; an edit is readFile(utf8) + an
 * exactly-once indexOf check + slice splice + that durable write; a listing is
 * readdir(withFileTypes) + sort by name (`<`) + an array of {name, type}.
 * Library side: `writeText`, `editText` (replaceAll false) and `listDir`, each
 * after `resolve(path)`, which is counted as library cost.
 *
 * Method: each job runs one untimed warm-up per side, then alternates raw and
 * library repetitions (raw, lib, raw, lib, ...). A repetition's total wall
 * time (performance.now) is divided by its operation count; the table shows
 * the medians and their ratio (library / raw) next to the target.
 * Data lives under <repo>/.bench-tmp and is removed at the end.
 *
 * Usage: node bench/dist/local.js [--quick] [--only create,overwrite,edit,list] [--json FILE]
 */
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, platform, release } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LocalFileSystem } from '@seamfs/backend-local'

/** `raw`: bare calls; `lib`: seamfs as shipped (lock entries: guards among processes); `proc`: seamfs with `lockScope: 'process'`. */
type Side = 'raw' | 'lib' | 'proc'
const SIDES: readonly Side[] = ['raw', 'lib', 'proc']
const TARGETS = { write: 1.15, edit: 1.2, list: 1.3 } as const

interface Job {
  readonly name: string
  readonly kind: keyof typeof TARGETS
  readonly reps: number
  readonly opsPerRep: number
  /** Untimed, once: data shared by every repetition. */
  setup?(): Promise<void>
  /** Untimed, before each repetition (warm-up is rep 0). */
  prepare?(side: Side, rep: number): Promise<void>
  /** Timed: one repetition. */
  run(side: Side, rep: number): Promise<void>
}

interface JobResult {
  readonly job: string
  readonly opsPerRep: number
  readonly rawMs: number[]
  readonly libMs: number[]
  readonly procMs: number[]
  readonly rawMedian: number
  readonly libMedian: number
  readonly procMedian: number
  readonly ratio: number
  /** What the cross-process lock costs: seamfs as shipped over seamfs with process-only locks. */
  readonly lockCost: number
  readonly target: number
  readonly ok: boolean
}

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, json: { type: 'string' } },
})
const quick = args.quick
const size = quick
  ? { files: 100, editFiles: 4, editsPerFile: 5, listEntries: 1_000, writeReps: 2, editReps: 2, listReps: 3 }
  : { files: 1_000, editFiles: 20, editsPerFile: 10, listEntries: 10_000, writeReps: 7, editReps: 5, listReps: 15 }
const LISTINGS_PER_REP = 5

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
await mkdir(join(repoRoot, '.bench-tmp'), { recursive: true })
const root = await mkdtemp(join(repoRoot, '.bench-tmp', 'local-'))
const fs = new LocalFileSystem({ cwd: root })
const fsProcess = new LocalFileSystem({ cwd: root, lockScope: 'process' })
const fsOf = (side: Side): LocalFileSystem => (side === 'proc' ? fsProcess : fs)

/** The raw durable write: temp 'wx' + write + fsync + close + rename + fsync of the directory. */
async function rawDurableWrite(path: string, content: string): Promise<void> {
  const dir = dirname(path)
  const temp = join(dir, `.${basename(path)}.${process.pid}.tmp`)
  const file = await open(temp, 'wx', 0o600)
  try {
    await file.writeFile(content)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temp, path)
  const dirHandle = await open(dir, 'r')
  try {
    await dirHandle.sync()
  } finally {
    await dirHandle.close()
  }
}

/** Exactly `bytes` ASCII bytes starting with `tag`. */
function filler(tag: string, bytes: number): string {
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n'
  const head = `${tag}\n`
  return (head + line.repeat(Math.ceil(bytes / line.length))).slice(0, bytes)
}

function fileNames(dir: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => join(dir, `f${String(i).padStart(5, '0')}.txt`))
}

function fourKiB(label: string, rep: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => filler(`${label} rep ${rep} file ${i}`, 4096))
}

async function durableWrites(side: Side, paths: readonly string[], contents: readonly string[]): Promise<void> {
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i] as string
    const content = contents[i] as string
    if (side === 'raw') await rawDurableWrite(path, content)
    else await fsOf(side).writeText(await fsOf(side).resolve(path), content)
  }
}

function createJob(): Job {
  let paths: string[] = []
  let contents: string[] = []
  return {
    name: `create ${size.files} × 4 KiB`,
    kind: 'write',
    reps: size.writeReps,
    opsPerRep: size.files,
    async prepare(side, rep) {
      const dir = join(root, `create-${side}-${rep}`)
      await mkdir(dir)
      paths = fileNames(dir, size.files)
      contents = fourKiB('create', rep, size.files)
    },
    run: (side) => durableWrites(side, paths, contents),
  }
}

function overwriteJob(): Job {
  const paths = {
    raw: fileNames(join(root, 'overwrite-raw'), size.files),
    lib: fileNames(join(root, 'overwrite-lib'), size.files),
    proc: fileNames(join(root, 'overwrite-proc'), size.files),
  }
  let contents: string[] = []
  return {
    name: `overwrite ${size.files} × 4 KiB`,
    kind: 'write',
    reps: size.writeReps,
    opsPerRep: size.files,
    async setup() {
      for (const side of SIDES) {
        await mkdir(join(root, `overwrite-${side}`))
        const initial = fourKiB('initial', -1, size.files)
        for (const [i, path] of paths[side].entries()) await writeFile(path, initial[i] as string, { mode: 0o600 })
      }
    },
    async prepare(side, rep) {
      contents = fourKiB(`overwrite ${side}`, rep, size.files)
    },
    run: (side) => durableWrites(side, paths[side], contents),
  }
}

/** Repetition `rep` turns marker generation `rep` into generation `rep + 1`. */
const marker = (k: number, generation: number): string => `@@EDIT-${k}-g${generation}@@`

function editJob(): Job {
  const { editFiles, editsPerFile } = size
  const paths = {
    raw: fileNames(join(root, 'edit-raw'), editFiles),
    lib: fileNames(join(root, 'edit-lib'), editFiles),
    proc: fileNames(join(root, 'edit-proc'), editFiles),
  }
  return {
    name: `edit ${editFiles * editsPerFile} in 1 MiB files`,
    kind: 'edit',
    reps: size.editReps,
    opsPerRep: editFiles * editsPerFile,
    async setup() {
      const chunk = (1024 * 1024) / editsPerFile
      for (const side of SIDES) {
        await mkdir(join(root, `edit-${side}`))
        for (const [f, path] of paths[side].entries()) {
          const parts = Array.from({ length: editsPerFile }, (_, k) => filler(`file ${f} ${marker(k, 0)}`, chunk))
          await writeFile(path, parts.join(''), { mode: 0o600 })
        }
      }
    },
    async run(side, rep) {
      for (const path of paths[side]) {
        for (let k = 0; k < editsPerFile; k++) {
          const oldString = marker(k, rep)
          const newString = marker(k, rep + 1)
          if (side !== 'raw') {
            await fsOf(side).editText(await fsOf(side).resolve(path), { oldString, newString, replaceAll: false })
            continue
          }
          const text = await readFile(path, 'utf8')
          const at = text.indexOf(oldString)
          if (at === -1 || text.indexOf(oldString, at + oldString.length) !== -1) {
            throw new Error(`${path}: "${oldString}" does not occur exactly once`)
          }
          await rawDurableWrite(path, text.slice(0, at) + newString + text.slice(at + oldString.length))
        }
      }
    },
  }
}

function listJob(): Job {
  const dir = join(root, 'list')
  return {
    name: `list ${size.listEntries} entries`,
    kind: 'list',
    reps: size.listReps,
    opsPerRep: LISTINGS_PER_REP,
    async setup() {
      await mkdir(dir)
      const paths = fileNames(dir, size.listEntries)
      for (let i = 0; i < paths.length; i += 100) {
        await Promise.all(paths.slice(i, i + 100).map((path) => writeFile(path, 'x')))
      }
    },
    async run(side) {
      for (let n = 0; n < LISTINGS_PER_REP; n++) {
        let count: number
        if (side !== 'raw') {
          count = (await fsOf(side).listDir(await fsOf(side).resolve(dir))).length
        } else {
          const dirents = await readdir(dir, { withFileTypes: true })
          dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          const entries = dirents.map((d) => ({
            name: d.name,
            type: d.isFile() ? 'file' : d.isDirectory() ? 'directory' : 'other',
          }))
          count = entries.length
        }
        if (count !== size.listEntries) throw new Error(`${side} listing saw ${count} entries`)
      }
    },
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

async function measure(job: Job): Promise<JobResult> {
  await job.setup?.()
  const times: Record<Side, number[]> = { raw: [], lib: [], proc: [] }
  for (let rep = 0; rep <= job.reps; rep++) {
    for (const side of SIDES) {
      await job.prepare?.(side, rep)
      const start = performance.now()
      await job.run(side, rep)
      const perOp = (performance.now() - start) / job.opsPerRep
      if (rep > 0) times[side].push(perOp) // rep 0 is the warm-up
    }
  }
  const rawMedian = median(times.raw)
  const libMedian = median(times.lib)
  const procMedian = median(times.proc)
  const ratio = libMedian / rawMedian
  const target = TARGETS[job.kind]
  const lockCost = libMedian / procMedian
  return {
    job: job.name,
    opsPerRep: job.opsPerRep,
    rawMs: times.raw,
    libMs: times.lib,
    procMs: times.proc,
    rawMedian,
    libMedian,
    procMedian,
    ratio,
    lockCost,
    target,
    ok: ratio <= target,
  }
}

function table(results: readonly JobResult[]): string {
  const rows = [
    ['job', 'raw median (ms/op)', 'seamfs median (ms/op)', 'ratio', 'target', 'ok', 'process-locks seamfs (ms/op)', 'lock cost'],
    ...results.map((r) => [
      r.job,
      r.rawMedian.toFixed(3),
      r.libMedian.toFixed(3),
      `${r.ratio.toFixed(2)}×`,
      `≤ ${r.target.toFixed(2)}×`,
      r.ok ? 'yes' : 'NO',
      r.procMedian.toFixed(3),
      `${r.lockCost.toFixed(2)}×`,
    ]),
  ]
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] as string).length)))
  const line = (row: readonly string[]): string => `| ${row.map((cell, c) => cell.padEnd(widths[c] as number)).join(' | ')} |`
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n')
}

const allJobs = { create: createJob, overwrite: overwriteJob, edit: editJob, list: listJob }
const chosen = args.only === undefined ? Object.keys(allJobs) : args.only.split(',').map((name) => name.trim())
const unknown = chosen.filter((name) => !(name in allJobs))
if (unknown.length > 0) throw new Error(`--only: unknown job(s) ${unknown.join(', ')}; choose from ${Object.keys(allJobs).join(', ')}`)
const jobs = chosen.map((name) => allJobs[name as keyof typeof allJobs]())
const environment = {
  node: process.version,
  platform: `${platform()} ${release()}`,
  cpus: availableParallelism(),
  cpuModel: cpus()[0]?.model ?? 'unknown',
  quick,
  dataDir: root,
}
console.log(`node ${environment.node} · ${environment.platform} · ${environment.cpus} CPUs (${environment.cpuModel})`)
console.log(`data under ${root}${quick ? ' · --quick' : ''}\n`)
try {
  const results: JobResult[] = []
  for (const job of jobs) {
    process.stdout.write(`${job.name}: warm-up + ${job.reps} reps per side ... `)
    const result = await measure(job)
    results.push(result)
    console.log(`${result.ratio.toFixed(2)}×`)
  }
  console.log(`\n${table(results)}\n\nper-repetition spread (ms/op, min–max):`)
  const range = (ms: readonly number[]): string => `${Math.min(...ms).toFixed(3)}–${Math.max(...ms).toFixed(3)}`
  for (const r of results) console.log(`  ${r.job}: raw ${range(r.rawMs)} · seamfs ${range(r.libMs)} · process locks ${range(r.procMs)}`)
  if (args.json !== undefined) {
    await writeFile(args.json, `${JSON.stringify({ environment, results }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await rm(root, { recursive: true, force: true })
}
