/**
 * glob and grep through `SandboxedFileSystem` against the same tools on the bare backend, on a
 * deep tree, same run (800 nested folders once took 23–26 s sandboxed against 141 ms bare).
 *
 * Tree: a chain of `depth` nested directories `d/d/…/d` on the local disk, each holding one file
 * `f.txt` with one line that matches: `depth` directories and `depth` files. Depths 100, 400 and
 * 800 (`--quick`: 50 and 200).
 *
 * Sides, each `createFileToolsByName` over:
 * - bare: `LocalFileSystem` rooted at the tree, unfenced (`sandbox: false`: the baseline);
 * - sandboxed: `SandboxedFileSystem` over it, with its defaults (`workspace-write`, reads confined).
 * Jobs: `glob **\/*.txt` and `grep needle`, each finding all `depth` files.
 *
 * Method: one untimed warm-up per side, then bare and sandboxed repetitions alternate (5 each, 3
 * with `--quick`, or `--reps N`); the table
 * shows the median wall time of one call (ms), their ratio (sandboxed / bare, the sandbox's cost)
 * next to the target, and how many times the sandbox resolved a path in the backend per entry
 * walked (a count that must not grow with depth). The ratio staying flat as depth grows is the
 * point: the sandbox's work per path is a bounded number of backend calls, each as deep as the
 * bare side's own. Data lives under <repo>/.bench-tmp and is removed at the end.
 *
 * Usage: node bench/dist/sandbox-depth.js [--quick] [--reps N] [--json FILE]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { SandboxedFileSystem, type FsTarget } from '@seamfs/core'
import type { Awaitable } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileToolsByName, type FileToolsByName } from '@seamfs/tools'
import { environment, machineLine, markdownTable } from './report.js'

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, reps: { type: 'string' }, json: { type: 'string' } } })
const quick = args.quick
const DEPTHS = quick ? [50, 200] : [100, 400, 800]
const REPS = args.reps === undefined ? (quick ? 3 : 5) : Number(args.reps)
if (!Number.isSafeInteger(REPS) || REPS < 1) throw new Error(`--reps: expected a positive integer, found ${args.reps}`)
/** Sandboxed at most this many times the bare time, at every depth. */
const TARGET = 2

type Side = 'bare' | 'sandboxed'
type Tool = 'glob' | 'grep'

interface Row {
  readonly depth: number
  readonly tool: Tool
  readonly bareMs: number[]
  readonly sandboxedMs: number[]
  readonly bareMedian: number
  readonly sandboxedMedian: number
  readonly ratio: number
  /** Backend `resolve` calls the sandboxed side made, per entry walked (directories and files). */
  readonly resolvesPerEntry: number
  readonly ok: boolean
}

/** The local backend, counting the paths the sandbox resolves in it (`resolvePath`, the hook behind `resolve`). */
class CountingLocal extends LocalFileSystem {
  resolves = 0
  protected override resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget> {
    this.resolves++
    return super.resolvePath(path, cwd)
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
await mkdir(join(repoRoot, '.bench-tmp'), { recursive: true })
const base = await mkdtemp(join(repoRoot, '.bench-tmp', 'sandbox-depth-'))

const trees = new Map<number, string>()

/** A chain of `depth` directories under a root of its own, one matching file in each (made once per depth). */
async function deepTree(depth: number): Promise<string> {
  const known = trees.get(depth)
  if (known !== undefined) return known
  const root = join(base, `depth-${depth}`)
  trees.set(depth, root)
  let dir = root
  await mkdir(dir)
  for (let i = 0; i < depth; i++) {
    dir = join(dir, 'd')
    await mkdir(dir)
    await writeFile(join(dir, 'f.txt'), `level ${i}: needle\n`)
  }
  return root
}

async function call(tools: FileToolsByName, tool: Tool, depth: number): Promise<void> {
  const [result, found] =
    tool === 'glob'
      ? await tools.glob.execute({ pattern: '**/*.txt' }).then((r) => [r, r.value?.totalPaths] as const)
      : await tools.grep.execute({ pattern: 'needle' }).then((r) => [r, r.value?.totalMatches] as const)
  if (result.isError === true || found !== depth) throw new Error(`${tool} at depth ${depth}: ${result.text.slice(0, 200)}`)
}

async function measure(depth: number, tool: Tool): Promise<Row> {
  const root = await deepTree(depth)
  const counting = new CountingLocal({ cwd: root })
  // Searches of the deepest trees must not stop at the default 30 s budget: the time is what is measured.
  const config = { searchTimeoutMs: 600_000 }
  const sides: Record<Side, FileToolsByName> = {
    bare: createFileToolsByName({ fs: new LocalFileSystem({ cwd: root }), cwd: root, config, sandbox: false }),
    sandboxed: createFileToolsByName({ fs: new SandboxedFileSystem(counting, { mode: 'workspace-write', workspaceRoot: root }), cwd: root, config }),
  }
  const times: Record<Side, number[]> = { bare: [], sandboxed: [] }
  let resolvesPerEntry = 0
  for (let rep = 0; rep <= REPS; rep++) {
    for (const side of ['bare', 'sandboxed'] as const) {
      counting.resolves = 0
      const start = performance.now()
      await call(sides[side], tool, depth)
      const ms = performance.now() - start
      if (side === 'sandboxed') resolvesPerEntry = counting.resolves / (2 * depth)
      if (rep > 0) times[side].push(ms) // rep 0 is the warm-up
    }
  }
  const bareMedian = median(times.bare)
  const sandboxedMedian = median(times.sandboxed)
  const ratio = sandboxedMedian / bareMedian
  return { depth, tool, bareMs: times.bare, sandboxedMs: times.sandboxed, bareMedian, sandboxedMedian, ratio, resolvesPerEntry, ok: ratio <= TARGET }
}

function table(rows: readonly Row[]): string {
  const header = ['depth', 'tool', 'bare median (ms)', 'sandboxed median (ms)', 'ratio', 'target', 'ok', 'sandbox resolves / entry']
  return markdownTable(
    header,
    rows.map((r) => [
      String(r.depth),
      r.tool,
      r.bareMedian.toFixed(1),
      r.sandboxedMedian.toFixed(1),
      `${r.ratio.toFixed(2)}×`,
      `≤ ${TARGET.toFixed(2)}×`,
      r.ok ? 'yes' : 'NO',
      r.resolvesPerEntry.toFixed(2),
    ]),
  )
}

const env = environment({ quick, reps: REPS, dataDir: base })
console.log(machineLine(env))
console.log(`data under ${base}${quick ? ' · --quick' : ''}\n`)
try {
  const rows: Row[] = []
  for (const depth of DEPTHS) {
    for (const tool of ['glob', 'grep'] as const) {
      process.stdout.write(`${tool} at depth ${depth}: warm-up + ${REPS} reps per side ... `)
      const row = await measure(depth, tool)
      rows.push(row)
      console.log(`${row.ratio.toFixed(2)}×`)
    }
  }
  console.log(`\n${table(rows)}\n\nper-repetition spread (ms, min–max):`)
  const range = (ms: readonly number[]): string => `${Math.min(...ms).toFixed(1)}–${Math.max(...ms).toFixed(1)}`
  for (const r of rows) console.log(`  ${r.tool} at depth ${r.depth}: bare ${range(r.bareMs)} · sandboxed ${range(r.sandboxedMs)}`)
  if (args.json !== undefined) {
    await writeFile(args.json, `${JSON.stringify({ environment: env, rows }, null, 2)}\n`)
    console.log(`\nresults written to ${args.json}`)
  }
} finally {
  await rm(base, { recursive: true, force: true })
}
