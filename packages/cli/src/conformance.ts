import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { formatReport, runConformance, type ConformanceReport, type TestReport } from '@seamfs/conformance/runner'
import type { Io } from './io.js'

export interface ConformanceRun {
  readonly io: Io
  /** Where per-test progress goes (stderr); undefined for none. */
  readonly progress?: ((text: string) => void) | undefined
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

function progressPrinter(label: string, progress: ConformanceRun['progress']): (test: TestReport) => void {
  let done = 0
  return (test) => {
    done++
    const mark = test.state === 'passed' ? '✓' : test.state === 'failed' ? '✗' : '-'
    progress?.(`[${label} ${String(done).padStart(3)}] ${mark} ${test.clause} › ${test.name}\n`)
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
  const report = await runConformance({ ...limitsOf(run), module: run.module, root: run.io.cwd, onTest: progressPrinter('kit', run.progress) })
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
    const report = await runConformance({
      ...limitsOf(run),
      module: require.resolve(`${pkg}/conformance`),
      root: run.io.cwd,
      onTest: progressPrinter(label, run.progress),
    })
    run.io.stdout(`${formatReport(report)}\n`)
    reports.push(report)
  }
  const failed = finish(run, reports)
  const total = reports.reduce((n, r) => n + r.passed, 0)
  run.io.stdout(`\n${failed ? 'FAILED' : 'OK'}: ${reports.length} backends, ${total} tests passed\n`)
  return failed
}
