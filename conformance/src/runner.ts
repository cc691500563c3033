import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { HostJob, HostMessage } from './host.js'
import type { CollectedTest, ProgressEvent } from './kit.js'
import { bareTitle, placeOf, publicReport, SKIP_NOTE, summarize, type ConformanceReport, type Reported, type TestReport } from './report.js'
import { DEFAULT_GENERATIVE_RUNS, DEFAULT_MODEL_RUNS, DEFAULT_TIMEOUT_MS } from './types.js'

export { serveConformanceHost } from './host.js'
export { formatReport, type ClauseReport, type ConformanceReport, type TestReport } from './report.js'

export interface RunOptions {
  /** Path of the module exporting the factory (default export, or `exportName`). */
  readonly module: string
  readonly exportName?: string | undefined
  /** Called as each test finishes. */
  readonly onTest?: ((test: TestReport) => void) | undefined
  /** Project root used to resolve the module's imports (default: cwd). */
  readonly root?: string | undefined
  /** Per-test timeout in ms; overrides the module's `options.timeoutMs` (default: that, else {@link DEFAULT_TIMEOUT_MS}). */
  readonly timeoutMs?: number | undefined
  /** Limit of the whole run in ms (default: the larger of 10 minutes and 10 × the per-test timeout; ten times that with `thorough`). */
  readonly runTimeoutMs?: number | undefined
  /** Ten times the runs of the model-based and generative tests (the module's, else the defaults): for a release, not for every CI run. */
  readonly thorough?: boolean | undefined
  /** The seed of the model-based and generative tests; overrides the module's `options.modelSeed`. */
  readonly seed?: number | undefined
}

/**
 * A seed as typed on a command line: an integer fast-check takes (32-bit signed); else a
 * `RangeError` that says what was expected.
 */
export function parseSeed(value: string): number {
  const n = Number(value)
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new RangeError(`expected an integer from -2147483648 to 2147483647, got "${value}"`)
  }
  return n
}

/** How many times more runs `thorough` asks for. */
export const THOROUGH_FACTOR = 10

/** How often the watchdog reads the progress log. */
const WATCH_INTERVAL_MS = 200
/** The least time starting vitest and importing the module may take before the watchdog steps in. */
const LOAD_TIMEOUT_MS = 30_000

const seconds = (ms: number): string => String(Math.round(ms / 100) / 10)
/** How long past a timeout the watchdog waits before it calls the worker stuck (a late timer, a slow machine). */
const grace = (timeoutMs: number): number => 2_000 + timeoutMs / 10
const defaultRunTimeout = (timeoutMs: number): number => Math.max(600_000, 10 * timeoutMs)

const KIT_EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
/** The module the host process runs (`host.ts`), in a plain node process: from source, its built twin. */
const HOST_MODULE = new URL(KIT_EXT === '.ts' ? '../dist/host.js' : './host.js', import.meta.url).href

function entryFile(module: string, exportName: string | undefined, progress: string, { timeoutMs, thorough, seed }: RunOptions): string {
  // Numbers pasted into the entry's source: only numbers.
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new RangeError(`timeoutMs must be a positive number, got ${String(timeoutMs)}`)
  if (seed !== undefined && !Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${String(seed)}`)
  const pick = exportName === undefined ? `mod.default ?? mod.conformance` : `mod[${JSON.stringify(exportName)}]`
  return [
    `import { describeConformance } from ${JSON.stringify(new URL(`./index${KIT_EXT}`, import.meta.url).href)}`,
    `import { logProgressTo } from ${JSON.stringify(new URL(`./kit${KIT_EXT}`, import.meta.url).href)}`,
    `const log = logProgressTo(${JSON.stringify(progress)})`,
    `log({ event: 'load', pid: process.pid })`,
    `const mod = await import(${JSON.stringify(pathToFileURL(module).href)})`,
    `let options = ${pick}`,
    `if (typeof options === 'function') options = await options()`,
    `if (options === undefined || typeof options.create !== 'function') {`,
    `  throw new Error('the module must export (default, "conformance" or --export) conformance options with a create() factory, or a function returning them')`,
    `}`,
    ...(timeoutMs === undefined ? [] : [`options = { ...options, options: { ...options.options, timeoutMs: ${timeoutMs} } }`]),
    ...(seed === undefined ? [] : [`options = { ...options, options: { ...options.options, modelSeed: ${seed} } }`]),
    ...(thorough !== true
      ? []
      : [
          `options = { ...options, options: { ...options.options, modelRuns: ${THOROUGH_FACTOR} * (options.options?.modelRuns ?? ${DEFAULT_MODEL_RUNS}), generativeRuns: ${THOROUGH_FACTOR} * (options.options?.generativeRuns ?? ${DEFAULT_GENERATIVE_RUNS}) } }`,
        ]),
    `log({ event: 'probe', timeoutMs: options.options?.timeoutMs ?? ${DEFAULT_TIMEOUT_MS} })`,
    `await describeConformance(options)`,
    `log({ event: 'registered' })`,
    '',
  ].join('\n')
}

/** Reads the complete lines appended to the progress log since the last call. */
function progressReader(file: string): () => (ProgressEvent & { at: number })[] {
  let offset = 0
  return () => {
    const fd = openSync(file, 'r')
    try {
      const buffer = Buffer.alloc(fstatSync(fd).size - offset)
      let read = 0
      while (read < buffer.length) {
        const n = readSync(fd, buffer, read, buffer.length - read, offset + read)
        if (n === 0) break
        read += n
      }
      const end = buffer.subarray(0, read).lastIndexOf(0x0a)
      if (end < 0) return []
      offset += end + 1
      return buffer
        .subarray(0, end)
        .toString('utf8')
        .split('\n')
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as ProgressEvent & { at: number }]
          } catch {
            return []
          }
        })
    } finally {
      closeSync(fd)
    }
  }
}

/** Kills the host and everything it started (the vitest worker): its process group, or its tree on Windows. */
function killHost(host: ChildProcess): void {
  if (host.pid === undefined) return
  try {
    if (process.platform === 'win32') spawnSync('taskkill', ['/pid', String(host.pid), '/T', '/F'], { stdio: 'ignore' })
    else process.kill(-host.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

/**
 * While a run is on: SIGINT, SIGTERM and SIGHUP kill the host's whole process
 * group, then take their default course (unless the program has its own
 * listeners); exiting kills it too. Returns the function that removes this.
 */
function onTermination(cleanup: () => void): () => void {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  const handler = (signal: NodeJS.Signals): void => {
    cleanup()
    remove()
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  const remove = (): void => {
    for (const signal of signals) process.off(signal, handler)
    process.off('exit', cleanup)
  }
  for (const signal of signals) process.on(signal, handler)
  process.on('exit', cleanup)
  return remove
}

/** The parent's side of a run: the host's results, the worker's progress log, and the watchdog over both. */
class Supervisor {
  readonly #options: RunOptions
  readonly #read: () => (ProgressEvent & { at: number })[]
  readonly #started = Date.now()
  readonly #results = new Map<string, Reported>()
  readonly #ended = new Map<string, Extract<ProgressEvent, { event: 'end' }> & { at: number }>()
  readonly #starts = new Map<string, number>()
  /** Tests reported from the progress log, whose result from vitest has not come yet. */
  readonly #fromLog = new Set<string>()
  readonly errors: string[] = []
  #collected: readonly CollectedTest[] | undefined
  #byId = new Map<string, CollectedTest>()
  #current: { id: string; at: number; timeoutMs: number } | undefined
  #phase = 'while starting vitest'
  #loading = true
  #lastEvent = Date.now()
  #timeoutMs: number
  #done = false
  /** Why the watchdog stopped the run. */
  #stopped: string | undefined

  constructor(options: RunOptions, progress: string) {
    this.#options = options
    this.#read = progressReader(progress)
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  }

  /** Runs vitest in a child process (its own process group) under the watchdog; resolves when it is gone. */
  async host(job: Omit<HostJob, 'timeoutMs'>): Promise<void> {
    const host = spawn(
      process.execPath,
      ['--input-type=module', '--eval', `import { serveConformanceHost } from ${JSON.stringify(HOST_MODULE)}\nawait serveConformanceHost()`],
      {
        cwd: job.root,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        detached: process.platform !== 'win32',
      },
    )
    const kill = (): void => killHost(host)
    const removeHandlers = onTermination(kill)
    const watchdog = setInterval(() => {
      this.#poll()
      const overdue = this.#overdue(Date.now())
      if (overdue !== undefined && this.#stopped === undefined) {
        this.#stopped = overdue
        kill()
      }
    }, WATCH_INTERVAL_MS)
    host.on('message', (received) => {
      const message = received as HostMessage
      this.#lastEvent = Date.now()
      if (message.type === 'done') {
        this.#done = true
        this.errors.push(...message.errors)
      } else if (this.#fromLog.delete(message.test.id)) {
        // Already told from the progress log: vitest's own result (its duration, its failure text) replaces it.
        this.#results.set(message.test.id, message.test)
      } else if (!this.#results.has(message.test.id)) {
        this.#results.set(message.test.id, message.test)
        this.#options.onTest?.(publicReport(message.test))
      }
    })
    try {
      await new Promise<void>((resolve) => {
        host.once('error', (err) => {
          this.errors.push(`could not start the test host: ${err.message}`)
          resolve()
        })
        host.once('close', (code, signal) => {
          if (!this.#done && this.#stopped === undefined) this.errors.push(`the test host exited early (${signal ?? `code ${code}`})`)
          resolve()
        })
        host.send({ ...job, timeoutMs: this.#timeoutMs } satisfies HostJob)
      })
    } finally {
      clearInterval(watchdog)
      removeHandlers()
      kill()
      this.#poll()
    }
  }

  #poll(): void {
    for (const e of this.#read()) {
      this.#lastEvent = Math.max(this.#lastEvent, e.at)
      if (e.event === 'load') this.#phase = 'while loading the module'
      else if (e.event === 'probe') {
        this.#loading = false
        this.#timeoutMs = this.#options.timeoutMs ?? e.timeoutMs
        this.#phase = 'while creating the probe filesystem of describeConformance'
      } else if (e.event === 'registered') this.#phase = 'while registering the tests'
      else if (e.event === 'collected') {
        this.#collected = e.tests
        this.#byId = new Map(e.tests.map((t) => [t.id, t]))
      } else if (e.event === 'start') {
        this.#current = { id: e.id, at: e.at, timeoutMs: e.timeoutMs }
        this.#starts.set(e.id, e.at)
      } else {
        this.#ended.set(e.id, e)
        this.#current = undefined
        this.#phase = `after the test "${this.#title(e.id)}"`
        this.#tellFromLog(e.id)
      }
    }
  }

  /**
   * Reports a finished test from the progress log when vitest has not yet: the worker batches
   * its results and sends them from a timer, so a backend that then stops returning control
   * (or a busy IPC pipe) would keep every result of the last moments unseen, and the user
   * would not learn which test the run got to.
   */
  #tellFromLog(id: string): void {
    if (this.#results.has(id)) return
    const test = this.#byId.get(id)
    if (test === undefined) return
    const made = this.#synthesize(test)
    this.#results.set(id, made)
    this.#fromLog.add(id)
    this.#options.onTest?.(publicReport(made))
  }

  #overdue(now: number): string | undefined {
    // A thorough run takes ten times the runs of its longest tests: its default limit grows with them.
    const runTimeoutMs = this.#options.runTimeoutMs ?? defaultRunTimeout(this.#timeoutMs) * (this.#options.thorough === true ? THOROUGH_FACTOR : 1)
    if (now - this.#started > runTimeoutMs) return `timed out: the run exceeded its limit of ${seconds(runTimeoutMs)} s (--run-timeout)`
    const current = this.#current
    if (current !== undefined) {
      const running = now - current.at
      if (running <= current.timeoutMs + grace(current.timeoutMs)) return undefined
      return `timed out: the backend did not return control for ${seconds(running)} s (the test's own timeout could not fire)`
    }
    const quiet = now - this.#lastEvent
    // Starting vitest and importing the module (transformed on the fly) may take long on a busy machine.
    const limit = this.#loading ? Math.max(LOAD_TIMEOUT_MS, this.#timeoutMs) : this.#timeoutMs
    if (quiet <= limit + grace(limit)) return undefined
    return `timed out: no progress for ${seconds(quiet)} s ${this.#phase}: an operation of the backend never settled, or never returned control`
  }

  #title(id: string): string {
    const test = this.#byId.get(id)
    return test === undefined ? id : `${bareTitle(placeOf(test.path).clause)} › ${test.name}`
  }

  /** A result for a test the host did not report: from the progress log, or why it never finished. */
  #synthesize(test: CollectedTest): Reported {
    const { suite, clause } = placeOf(test.path)
    const place = { id: test.id, suite, clause: bareTitle(clause), name: bareTitle(test.name) }
    if (test.mode === 'skip' || test.mode === 'todo') {
      return { ...place, state: 'skipped', note: SKIP_NOTE.exec(test.name)?.[1] ?? SKIP_NOTE.exec(clause)?.[1] ?? 'skipped', durationMs: 0 }
    }
    const started = this.#starts.get(test.id)
    const ended = this.#ended.get(test.id)
    if (ended !== undefined && started !== undefined) {
      const durationMs = ended.at - started
      return ended.state === 'pass' ? { ...place, state: 'passed', durationMs } : { ...place, state: 'failed', note: ended.note ?? 'failed', durationMs }
    }
    const stopped = this.#stopped
    if (started !== undefined) {
      const note = stopped ?? 'the test worker exited during this test (a crash, or out of memory?)'
      return { ...place, state: 'failed', note, durationMs: Date.now() - started }
    }
    const note = `not run: ${stopped === undefined ? 'the test worker exited first' : 'the run was stopped first'}`
    return { ...place, state: 'failed', note, durationMs: 0, notRun: true }
  }

  report(module: string): ConformanceReport {
    const collected = this.#collected ?? []
    const tests: Reported[] = collected.map((test) => {
      const reported = this.#results.get(test.id)
      if (reported !== undefined) return reported
      const made = this.#synthesize(test)
      if (made.notRun !== true) this.#options.onTest?.(publicReport(made))
      return made
    })
    const listed = new Set(collected.map((t) => t.id))
    tests.push(...[...this.#results.values()].filter((t) => !listed.has(t.id)))
    const errors = [...this.errors]
    if (this.#stopped !== undefined) {
      const where = this.#current === undefined ? '' : ` in "${this.#title(this.#current.id)}"`
      errors.unshift(`run stopped, the test worker killed: ${this.#stopped}${where}`)
    }
    return summarize(module, tests, errors, Date.now() - this.#started)
  }
}

/**
 * Runs the conformance kit against the factory a module exports and reports per clause.
 *
 * Vitest runs in a child process, in a process group of its own, under a watchdog: a test
 * past its timeout fails with "timed out" (the kit's own timer); a backend that never
 * returns control (a synchronous loop, where no timer can fire) gets the worker killed
 * after the test's timeout plus a grace, as does a run past `runTimeoutMs`. The tests
 * that did not finish are then reported failed, saying why. SIGINT, SIGTERM and SIGHUP
 * during the run kill the whole group before they take their course: no worker survives.
 */
export async function runConformance(options: RunOptions): Promise<ConformanceReport> {
  const root = resolve(options.root ?? process.cwd())
  const module = isAbsolute(options.module) ? options.module : resolve(root, options.module)
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-conformance-'))
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true })
  // A signal ends the process before the `finally` below runs.
  const removeOnSignal = onTermination(removeDir)
  try {
    const file = join(dir, 'conformance.test.mjs')
    const progress = join(dir, 'progress.jsonl')
    writeFileSync(progress, '')
    writeFileSync(file, entryFile(module, options.exportName, progress, options))
    const supervisor = new Supervisor(options, progress)
    await supervisor.host({ root, dir, file })
    return supervisor.report(module)
  } finally {
    removeOnSignal()
    removeDir()
  }
}
