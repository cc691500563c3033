import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { ConformanceReport } from '@seamfs/conformance/runner'

// The kit itself must not hang, blow up or leak: each hostile backend in hygiene/ is run
// through the real CLIs (a separate vitest run each), which must end within a bounded time
// with a clear report, and leave no process behind, also when they are killed.
const CONFORMANCE_CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const SEAMFS_CLI = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url))
const REPO = fileURLToPath(new URL('../..', import.meta.url))
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'seamfs-hygiene-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** pid → [ppid, state] of every process, from `ps`. */
async function processTable(): Promise<Map<number, readonly [number, string]>> {
  const { stdout } = await promisify(execFile)('ps', ['-A', '-o', 'pid=,ppid=,stat='])
  const table = new Map<number, readonly [number, string]>()
  for (const line of stdout.split('\n')) {
    const [pid, ppid, stat] = line.trim().split(/\s+/)
    if (pid !== undefined && ppid !== undefined && stat !== undefined) table.set(Number(pid), [Number(ppid), stat])
  }
  return table
}

/** The live descendants of `root` (zombies are dead: they only wait to be reaped). */
async function descendants(root: number): Promise<number[]> {
  const table = await processTable()
  const found: number[] = []
  const walk = (parent: number): void => {
    for (const [pid, [ppid, stat]] of table) {
      if (ppid === parent && !found.includes(pid)) {
        if (!stat.startsWith('Z')) found.push(pid)
        walk(pid)
      }
    }
  }
  walk(root)
  return found
}

/** Those of `pids` still alive after up to `withinMs`. */
async function survivors(pids: readonly number[], withinMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const table = await processTable()
    const alive = pids.filter((pid) => table.get(pid)?.[1].startsWith('Z') === false)
    if (alive.length === 0 || Date.now() > deadline) return alive
    await sleep(200)
  }
}

interface Run {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
  /** Every descendant process seen while the CLI ran (the vitest host and its worker). */
  readonly children: readonly number[]
  readonly report: ConformanceReport | undefined
}

interface RunSpec {
  readonly cli: 'seamfs-conformance' | 'seamfs conformance'
  readonly module: string
  readonly args: readonly string[]
  /** Sends this signal once the worker is stuck in a test (the progress output stopped). */
  readonly kill?: NodeJS.Signals
  /** The test's own bound: the CLI is SIGKILLed past it (and the test fails on the missing report). */
  readonly limitMs: number
}

function runCli(spec: RunSpec): Promise<Run> {
  const json = join(out, `${spec.module.replaceAll(/[^a-z]/gi, '_')}-${Date.now()}.json`)
  const argv =
    spec.cli === 'seamfs-conformance'
      ? [CONFORMANCE_CLI, here(spec.module), '--json', json, ...spec.args]
      : [SEAMFS_CLI, 'conformance', here(spec.module), '--json', json, ...spec.args]
  const started = Date.now()
  const child = spawn(process.execPath, argv, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const children = new Set<number>()
  let sent = false
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  let lastOutput = Date.now()
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
    lastOutput = Date.now()
  })
  const watch = setInterval(() => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
    void descendants(child.pid).then((pids) => {
      for (const pid of pids) children.add(pid)
      // Tests passed, then the progress stopped with the worker up: it spins (the first listing test). Kill now.
      if (spec.kill !== undefined && !sent && stderr.includes('✓') && Date.now() - lastOutput > 1_500 && pids.length >= 2) {
        sent = true
        child.kill(spec.kill)
      }
    })
  }, 200)
  const guard = setTimeout(() => child.kill('SIGKILL'), spec.limitMs)
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearInterval(watch)
      clearTimeout(guard)
      const report = existsSync(json) ? (JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport) : undefined
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, children: [...children], report })
    })
  })
}

const failedWith = (report: ConformanceReport | undefined, pattern: RegExp): string[] =>
  (report?.tests ?? []).filter((t) => t.state === 'failed' && pattern.test(t.note ?? '')).map((t) => `${t.clause} › ${t.name}`)

const posix = process.platform !== 'win32'

let spinning: Promise<Run> | undefined
/** The spinning backend run to its end once (`--timeout 2`): the kill tests compare their progress output with its report. */
const spinsRun = (): Promise<Run> =>
  (spinning ??= runCli({ cli: 'seamfs-conformance', module: 'hygiene/spins.ts', args: ['--quiet', '--timeout', '2'], limitMs: 90_000 }))

describe.skipIf(!posix)('the kit does not hang: a hostile backend fails tests, in bounded time', () => {
  it('an operation that never settles fails its tests "timed out" after the per-test timeout; the run stops at --run-timeout', async () => {
    const run = await runCli({
      cli: 'seamfs-conformance',
      module: 'hygiene/never-settles.ts',
      args: ['--quiet', '--timeout', '1', '--run-timeout', '15'],
      limitMs: 60_000,
    })
    expect(run.code, run.stderr).toBe(1)
    expect(run.ms).toBeLessThan(45_000)
    // Each test that reads waits 1 s, then fails; the run timeout cuts the series short.
    const timedOut = failedWith(run.report, /^timed out after 1 s: an operation of the backend never settled/)
    expect(timedOut.length).toBeGreaterThan(1)
    expect(run.report?.passed).toBeGreaterThan(10)
    expect(run.report?.errors[0]).toMatch(/^run stopped, the test worker killed: timed out: the run exceeded its limit of 15 s \(--run-timeout\)/)
    expect(run.report?.tests.filter((t) => t.notRun === true).length).toBeGreaterThan(0)
    expect(run.stdout).toMatch(/more tests not run: the run was stopped first/)
    expect(await survivors(run.children)).toEqual([])
  }, 70_000)

  it('a backend that never returns control (a synchronous loop) gets the worker killed: the test fails "did not return control"', async () => {
    const run = await spinsRun()
    expect(run.code, run.stderr).toBe(1)
    const stuck = failedWith(run.report, /^timed out: the backend did not return control for [\d.]+ s/)
    expect(stuck).toEqual([expect.stringMatching(/^listing › /)])
    const [, waited] = /did not return control for ([\d.]+) s/.exec(run.stdout) ?? []
    // 2 s of the kit's timeout, 1 s of vitest's margin, then the watchdog's grace (2.3 s) and its tick.
    expect(Number(waited)).toBeGreaterThan(3)
    expect(Number(waited)).toBeLessThan(10)
    expect(run.report?.errors[0]).toMatch(/^run stopped, the test worker killed: timed out: the backend did not return control .* in "listing › /)
    expect(run.report?.tests.filter((t) => t.notRun === true).length).toBeGreaterThan(50)
    expect(run.report?.passed).toBeGreaterThan(10)
    expect(await survivors(run.children)).toEqual([])
  }, 100_000)

  it('a factory that never delivers stops the run before any test, saying where it hung; the CLI exits 1', async () => {
    const run = await runCli({ cli: 'seamfs-conformance', module: 'hygiene/create-never-settles.ts', args: ['--quiet', '--timeout', '2'], limitMs: 90_000 })
    expect(run.code, run.stderr).toBe(1)
    expect(run.report?.tests).toEqual([])
    expect(run.report?.errors).toEqual([
      expect.stringMatching(
        /^run stopped, the test worker killed: timed out: no progress for [\d.]+ s while creating the probe filesystem of describeConformance/,
      ),
    ])
    expect(await survivors(run.children)).toEqual([])
  }, 100_000)

  it('a worker that dies mid-run fails the test it was in and the tests it did not run; the CLI exits 1', async () => {
    const run = await runCli({ cli: 'seamfs-conformance', module: 'hygiene/crashes.ts', args: ['--quiet'], limitMs: 60_000 })
    expect(run.code, run.stderr).toBe(1)
    expect(failedWith(run.report, /^the test worker exited during this test/)).toEqual([expect.stringMatching(/^listing › /)])
    expect(run.report?.tests.filter((t) => t.notRun === true && t.note === 'not run: the test worker exited first').length).toBeGreaterThan(50)
    expect(run.report?.errors.length).toBeGreaterThan(0)
    expect(await survivors(run.children)).toEqual([])
  }, 70_000)

  it('a correct backend whose reads complete without an event-loop turn (writes after one) passes the whole kit: every kit loop yields', async () => {
    const run = await runCli({ cli: 'seamfs-conformance', module: 'hygiene/macrotask-writes.ts', args: ['--quiet', '--timeout', '30'], limitMs: 150_000 })
    expect(run.report?.errors).toEqual([])
    expect(failedWith(run.report, /./)).toEqual([])
    expect(run.code).toBe(0)
    expect(await survivors(run.children)).toEqual([])
  }, 160_000)

  it('a listing that contains its own directory fails tests with a message; the run ends by itself, without a crash', async () => {
    const run = await runCli({ cli: 'seamfs-conformance', module: 'hygiene/self-listing.ts', args: ['--quiet', '--timeout', '5'], limitMs: 90_000 })
    expect(run.code, run.stderr).toBe(1)
    expect(run.ms).toBeLessThan(80_000)
    const failed = run.report?.tests.filter((t) => t.state === 'failed') ?? []
    expect(failed.length).toBeGreaterThan(0)
    for (const test of failed) expect(test.note, `${test.clause} › ${test.name}`).toMatch(/\S/)
    expect(run.report?.clauses.find((c) => c.clause === 'listing')?.failed).toBeGreaterThan(0)
    expect(run.report?.errors.filter((e) => /heap|worker/i.test(e))).toEqual([])
    expect(await survivors(run.children)).toEqual([])
  }, 100_000)
})

describe.skipIf(!posix)('the kit does not leak: killing the CLI kills its vitest worker', () => {
  // SIGKILL cannot be handled: the vitest host sees its parent gone and takes its process group down.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`${signal} to seamfs-conformance while the backend spins: the CLI ends and no process of the run is left`, async () => {
      const run = await runCli({ cli: 'seamfs-conformance', module: 'hygiene/spins.ts', args: ['--timeout', '60'], kill: signal, limitMs: 60_000 })
      expect(run.signal, run.stderr).toBe(signal)
      expect(run.children.length).toBeGreaterThanOrEqual(2)
      expect(await survivors(run.children)).toEqual([])
      // Killed while the worker spins: every test it passed before was shown by then, although the
      // worker's own batched results never left it (they go out from a timer, which cannot fire).
      expect(run.stderr.match(/ ✓ /g)?.length).toBe((await spinsRun()).report?.passed)
    }, 170_000)
  }
})

describe.skipIf(!posix || !existsSync(SEAMFS_CLI))('seamfs conformance: the same hygiene through the seamfs CLI', () => {
  it('--timeout: a backend that never returns control gets the worker killed; exit 1 with the report', async () => {
    const run = await runCli({ cli: 'seamfs conformance', module: 'hygiene/spins.ts', args: ['--quiet', '--timeout', '2'], limitMs: 90_000 })
    expect(run.code, run.stderr).toBe(1)
    expect(failedWith(run.report, /^timed out: the backend did not return control for [\d.]+ s/)).toEqual([expect.stringMatching(/^listing › /)])
    expect(run.stdout).toMatch(/error: run stopped, the test worker killed/)
    expect(await survivors(run.children)).toEqual([])
  }, 100_000)

  it('SIGTERM while the backend spins: the CLI ends and no process of the run is left', async () => {
    const run = await runCli({ cli: 'seamfs conformance', module: 'hygiene/spins.ts', args: ['--timeout', '60'], kill: 'SIGTERM', limitMs: 60_000 })
    expect(run.signal, run.stderr).toBe('SIGTERM')
    expect(run.children.length).toBeGreaterThanOrEqual(2)
    expect(await survivors(run.children)).toEqual([])
    expect(run.stderr.match(/ ✓ /g)?.length).toBe((await spinsRun()).report?.passed)
  }, 170_000)
})
