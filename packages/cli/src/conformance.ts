import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { formatReport, runConformance, type ConformanceReport, type TestReport } from '@seamfs/conformance/runner'
import type { Io } from './io.js'

export interface ConformanceRun {
  readonly io: Io
  /** Where per-test progress goes (stderr); undefined for none. */
  readonly progress?: ((text: string) => void) | undefined
  /**
   * The progress goes to a terminal: one line, rewritten as tests finish (failures stay, a line
   * each). Otherwise (a log, a pipe) a line per test.
   */
  readonly live?: boolean | undefined
  readonly json?: string | undefined
  /** Per-test timeout in ms (overrides the module's `options.timeoutMs`). */
  readonly timeoutMs?: number | undefined
  /** Limit of each backend's run in ms. */
  readonly runTimeoutMs?: number | undefined
  /** Ten times the runs of the model-based and generative tests. */
  readonly thorough?: boolean | undefined
  /** The seed of the model-based and generative tests. */
  readonly seed?: number | undefined
}

/** The width of the live progress line: what most terminals show without wrapping. */
const LIVE_COLUMNS = 100
const CLEAR_LINE = '\r\u001b[K'

/** Progress of a run: a line per test on a log; on a terminal, one status line rewritten in place, and a line per failure. */
export function progressPrinter(
  label: string,
  run: Pick<ConformanceRun, 'progress' | 'live'>,
): { readonly onTest: (test: TestReport) => void; readonly end: () => void } {
  const { progress, live } = run
  let done = 0
  let failed = 0
  return {
    onTest: (test) => {
      done++
      if (test.state === 'failed') failed++
      const mark = test.state === 'passed' ? '✓' : test.state === 'failed' ? '✗' : '-'
      const line = `[${label} ${String(done).padStart(3)}] ${mark} ${test.clause} › ${test.name}`
      if (live !== true) progress?.(`${line}\n`)
      else if (test.state === 'failed') progress?.(`${CLEAR_LINE}${line}\n`)
      else {
        const status = `[${label} ${String(done).padStart(3)}${failed > 0 ? `, ${failed} failed` : ''}] ${test.clause} › ${test.name}`
        progress?.(`${CLEAR_LINE}${[...status].slice(0, LIVE_COLUMNS).join('')}`)
      }
    },
    end: () => {
      if (live === true) progress?.(CLEAR_LINE)
    },
  }
}

function finish(run: ConformanceRun, reports: readonly ConformanceReport[]): boolean {
  if (run.json !== undefined) {
    writeFileSync(resolve(run.io.cwd, run.json), `${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`)
  }
  return reports.some((r) => r.failed > 0 || r.errors.length > 0 || r.passed === 0)
}

const limitsOf = (run: ConformanceRun): Pick<ConformanceRun, 'timeoutMs' | 'runTimeoutMs' | 'thorough' | 'seed'> => ({
  timeoutMs: run.timeoutMs,
  runTimeoutMs: run.runTimeoutMs,
  thorough: run.thorough,
  seed: run.seed,
})

/** The kit on a module exporting conformance options; true when anything failed. */
export async function runModuleConformance(run: ConformanceRun & { readonly module: string }): Promise<boolean> {
  const printer = progressPrinter('kit', run)
  const report = await runConformance({ ...limitsOf(run), module: run.module, root: run.io.cwd, onTest: printer.onTest }).finally(printer.end)
  run.io.stdout(`${formatReport(report)}\n`)
  return finish(run, [report])
}

/** The built-in backends' conformance modules (shipped by the backend packages themselves). */
const BUILTIN: ReadonlyArray<readonly [label: string, pkg: string]> = [
  ['memory', '@seamfs/backend-memory'],
  ['local', '@seamfs/backend-local'],
]

/** The first built-in backend package that is not installed (they are optional peers of the CLI). */
export function missingBuiltin(): string | undefined {
  const require = createRequire(import.meta.url)
  return BUILTIN.find(([, pkg]) => {
    try {
      require.resolve(`${pkg}/conformance`)
      return false
    } catch {
      return true
    }
  })?.[1]
}

/**
 * The kit against the embedded backends: memory, and local in a temporary
 * directory. No server, no configuration. True when anything failed.
 */
export async function runBuiltinConformance(run: ConformanceRun & { readonly fs?: string | undefined }): Promise<boolean> {
  if (run.fs !== undefined) {
    throw new Error('seamfs conformance --fs: give a module exporting conformance options instead, or --builtin')
  }
  const require = createRequire(import.meta.url)
  const reports: ConformanceReport[] = []
  for (const [label, pkg] of BUILTIN) {
    run.io.stdout(`\n== conformance: ${label} ==\n`)
    const printer = progressPrinter(label, run)
    const report = await runConformance({
      ...limitsOf(run),
      module: require.resolve(`${pkg}/conformance`),
      root: run.io.cwd,
      onTest: printer.onTest,
    }).finally(printer.end)
    run.io.stdout(`${formatReport(report)}\n`)
    reports.push(report)
  }
  const failed = finish(run, reports)
  const total = reports.reduce((n, r) => n + r.passed, 0)
  run.io.stdout(`\n${failed ? 'FAILED' : 'OK'}: ${reports.length} backends, ${total} tests passed\n`)
  return failed
}
