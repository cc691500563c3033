import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startVitest } from 'vitest/node'
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node'

/** One test's result. */
export interface TestReport {
  readonly clause: string
  readonly name: string
  readonly state: 'passed' | 'failed' | 'skipped'
  /** Why it was skipped (from the group title), or the first error line of a failure. */
  readonly note?: string
  readonly durationMs: number
}

/** Results of one contract clause (a top-level group of the kit). */
export interface ClauseReport {
  readonly clause: string
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  /** Skip reasons of the clause, deduplicated. */
  readonly skipReasons: readonly string[]
}

export interface ConformanceReport {
  readonly module: string
  readonly suite: string
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  readonly durationMs: number
  readonly clauses: readonly ClauseReport[]
  readonly tests: readonly TestReport[]
  /** Errors outside any test (the module failed to load, say). */
  readonly errors: readonly string[]
}

export interface RunOptions {
  /** Path of the module exporting the factory (default export, or `exportName`). */
  readonly module: string
  readonly exportName?: string | undefined
  /** Called as each test finishes. */
  readonly onTest?: ((test: TestReport) => void) | undefined
  /** Project root used to resolve the module's imports (default: cwd). */
  readonly root?: string | undefined
}

const SKIP_NOTE = /\(skipped: (.*)\)$/

function clauseOf(test: TestCase): { suite: string; clause: string } {
  const chain: string[] = []
  let parent: TestSuite | TestModule = test.parent
  while (parent.type === 'suite') {
    chain.unshift(parent.name)
    parent = parent.parent
  }
  return { suite: chain[0] ?? '', clause: chain[1] ?? chain[0] ?? '(top level)' }
}

/** A clause title without the skip reason the kit appends to skipped groups. */
function bareTitle(title: string): string {
  return title.replace(SKIP_NOTE, '').trimEnd()
}

function reportOf(test: TestCase): TestReport & { suite: string } {
  const { suite, clause } = clauseOf(test)
  const result = test.result()
  const durationMs = Math.round(test.diagnostic()?.duration ?? 0)
  if (result.state === 'failed') {
    const first = result.errors?.[0]?.message?.split('\n')[0] ?? 'failed'
    return { suite, clause: bareTitle(clause), name: test.name, state: 'failed', note: first, durationMs }
  }
  if (result.state === 'skipped' || result.state === 'pending') {
    const reason = SKIP_NOTE.exec(test.name)?.[1] ?? SKIP_NOTE.exec(clause)?.[1] ?? ('note' in result ? result.note : undefined) ?? 'skipped'
    return { suite, clause: bareTitle(clause), name: bareTitle(test.name), state: 'skipped', note: reason, durationMs }
  }
  return { suite, clause: bareTitle(clause), name: test.name, state: 'passed', durationMs }
}

function entryFile(module: string, exportName: string | undefined): string {
  const kit = new URL(import.meta.url.endsWith('.ts') ? './index.ts' : './index.js', import.meta.url)
  const pick = exportName === undefined ? `mod.default ?? mod.conformance` : `mod[${JSON.stringify(exportName)}]`
  return [
    `import { describeConformance } from ${JSON.stringify(kit.href)}`,
    `const mod = await import(${JSON.stringify(pathToFileURL(module).href)})`,
    `let options = ${pick}`,
    `if (typeof options === 'function') options = await options()`,
    `if (options === undefined || typeof options.create !== 'function') {`,
    `  throw new Error('the module must export (default, "conformance" or --export) conformance options with a create() factory, or a function returning them')`,
    `}`,
    `await describeConformance(options)`,
    '',
  ].join('\n')
}

/** Runs the conformance kit against the factory a module exports, in vitest, and reports per clause. */
export async function runConformance(options: RunOptions): Promise<ConformanceReport> {
  const root = resolve(options.root ?? process.cwd())
  const module = isAbsolute(options.module) ? options.module : resolve(root, options.module)
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-conformance-'))
  const file = join(dir, 'conformance.test.mjs')
  writeFileSync(file, entryFile(module, options.exportName))
  const tests: (TestReport & { suite: string })[] = []
  const reporter: Reporter = {
    onTestCaseResult(test) {
      const report = reportOf(test)
      tests.push(report)
      options.onTest?.(report)
    },
  }
  const started = Date.now()
  const errors: string[] = []
  try {
    const vitest = await startVitest(
      'test',
      [],
      {
        root,
        dir,
        include: [file],
        config: false,
        // Vitest's result cache would land in the user's project (node_modules/.vite); keep it with the run.
        cache: false,
        watch: false,
        reporters: [reporter],
        passWithNoTests: true,
        fileParallelism: false,
        server: { deps: { inline: true } },
        testTimeout: 120_000,
        hookTimeout: 120_000,
      },
      { server: { fs: { strict: false } } },
    )
    for (const testModule of vitest.state.getTestModules()) {
      for (const error of testModule.errors()) errors.push(error.message)
    }
    for (const error of vitest.state.getUnhandledErrors()) errors.push(String((error as Error).message ?? error))
    await vitest.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const clauses = new Map<string, { passed: number; failed: number; skipped: number; reasons: Set<string> }>()
  for (const t of tests) {
    const c = clauses.get(t.clause) ?? { passed: 0, failed: 0, skipped: 0, reasons: new Set<string>() }
    c[t.state]++
    if (t.state === 'skipped' && t.note !== undefined) c.reasons.add(t.note)
    clauses.set(t.clause, c)
  }
  const count = (state: TestReport['state']): number => tests.filter((t) => t.state === state).length
  return {
    module,
    suite: tests[0]?.suite ?? '',
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    durationMs: Date.now() - started,
    clauses: [...clauses].map(([clause, c]) => ({
      clause,
      passed: c.passed,
      failed: c.failed,
      skipped: c.skipped,
      skipReasons: [...c.reasons],
    })),
    tests: tests.map(({ suite: _suite, ...t }) => t),
    errors,
  }
}

/** The per-clause table the CLI prints. */
export function formatReport(report: ConformanceReport): string {
  const rows = report.clauses.map((c) => [c.clause, String(c.passed), String(c.failed), String(c.skipped), c.skipReasons.join('; ')])
  const header = ['clause', 'passed', 'failed', 'skipped', 'skip reason']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === 0 || i === 4 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  const out = [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)]
  const failures = report.tests.filter((t) => t.state === 'failed')
  if (failures.length > 0) {
    out.push('', 'failures:')
    for (const f of failures) out.push(`  ✗ ${f.clause} › ${f.name}`, `      ${f.note ?? ''}`)
  }
  for (const error of report.errors) out.push('', `error: ${error}`)
  out.push(
    '',
    `${report.suite || report.module}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped (${(report.durationMs / 1000).toFixed(1)} s)`,
  )
  return out.join('\n')
}
