#!/usr/bin/env node
/**
 * seamfs-conformance <module> [--export NAME] [--json FILE] [--quiet]
 *
 * Loads a module that exports conformance options (a `create()` factory, and
 * optional `external` hooks and tuning), runs the whole kit in vitest, prints a
 * per-clause table and exits non-zero on any failure.
 */
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { formatReport, runConformance, type TestReport } from './runner.js'

const USAGE = 'usage: seamfs-conformance <module> [--export NAME] [--json FILE] [--quiet]'

async function main(): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        export: { type: 'string' },
        json: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const module = positionals[0]
  if (module === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  let done = 0
  const onTest = (test: TestReport): void => {
    done++
    if (values.quiet === true) return
    const mark = test.state === 'passed' ? '✓' : test.state === 'failed' ? '✗' : '-'
    process.stderr.write(`[${String(done).padStart(3)}] ${mark} ${test.clause} › ${test.name}\n`)
  }
  const report = await runConformance({ module, exportName: values.export, onTest })
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
