#!/usr/bin/env node
/**
 * seamfs-conformance <module> [--export NAME] [--json FILE] [--timeout S] [--run-timeout S] [--thorough] [--seed N] [--quiet]
 *
 * Loads a module that exports conformance options (a `create()` factory, and
 * optional `external` hooks and tuning), runs the whole kit in vitest, prints a
 * per-clause table and exits non-zero on any failure.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { formatReport, parseSeed, runConformance, type TestReport } from './runner.js'

const USAGE = 'usage: seamfs-conformance <module> [--export NAME] [--json FILE] [--timeout SECONDS] [--run-timeout SECONDS] [--thorough] [--seed N] [--quiet]'

const HELP = `${USAGE}

Runs the seamfs conformance kit on the conformance options <module> exports
(default export, "conformance", or --export NAME) and prints a per-clause table.

  --export NAME          the export holding the options
  --json FILE            also write the report as JSON
  --timeout SECONDS      per-test timeout (default: options.timeoutMs, else 60);
                         a test past it fails "timed out". A backend that never returns
                         control (a synchronous loop) gets the test worker killed once
                         the timeout plus a grace has passed; the tests not finished fail
  --run-timeout SECONDS  limit of the whole run (default: 10 min, or 10 x --timeout if more);
                         past it the worker is killed, the tests not finished fail
  --thorough             ten times the runs of the model-based and generative tests
                         (for a release; CI keeps the module's counts and seed)
  --seed N               the seed of the model-based and generative tests
                         (default: the module's modelSeed, else fixed)
  --quiet                no per-test progress on stderr

Exit codes: 0 all passed, 1 a test failed or the run was stopped, 2 a usage error.
SIGINT/SIGTERM kill the test worker before the command exits.
`

/** Seconds from the command line as milliseconds; undefined when absent. */
function secondsOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number of seconds, got "${value}"`)
  return Math.round(n * 1000)
}

/** `--seed`: an integer fast-check takes (a 32-bit signed one). */
function seedOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  try {
    return parseSeed(value)
  } catch (err) {
    throw new Error(`--seed: ${(err as Error).message}`)
  }
}

async function main(): Promise<number> {
  let parsed
  let timeoutMs: number | undefined
  let runTimeoutMs: number | undefined
  let seed: number | undefined
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        export: { type: 'string' },
        json: { type: 'string' },
        timeout: { type: 'string' },
        'run-timeout': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        thorough: { type: 'boolean', default: false },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
    timeoutMs = secondsOption('timeout', parsed.values.timeout)
    runTimeoutMs = secondsOption('run-timeout', parsed.values['run-timeout'])
    seed = seedOption(parsed.values.seed)
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(HELP)
    return 0
  }
  const module = positionals[0]
  if (module === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  // A path that names no file is a usage error, not a run that reports nothing (a package name is the runner's to resolve).
  const isPath = /^[./]/.test(module) || /\.[cm]?[jt]s$/.test(module)
  if (isPath && !existsSync(resolve(module))) {
    process.stderr.write(`seamfs-conformance: no module at ${module}\n`)
    return 2
  }
  let done = 0
  const onTest = (test: TestReport): void => {
    done++
    if (values.quiet === true) return
    const mark = test.state === 'passed' ? '✓' : test.state === 'failed' ? '✗' : '-'
    process.stderr.write(`[${String(done).padStart(3)}] ${mark} ${test.clause} › ${test.name}\n`)
  }
  const report = await runConformance({ module, exportName: values.export, onTest, timeoutMs, runTimeoutMs, thorough: values.thorough, seed })
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`)
  process.stdout.write(`${formatReport(report)}\n`)
  const ran = report.passed + report.failed
  return report.failed > 0 || report.errors.length > 0 || ran === 0 ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`seamfs-conformance: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(2)
  },
)
