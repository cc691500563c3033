// The report of a run, as the supervisor assembles it and the CLI prints it; shared by both sides of a run (runner.ts, host.ts).

/** One test's result. */
/** The most of a failure's message a report keeps: a model-based failure's counterexample and replay line fit. */
export const MAX_NOTE_CHARS = 8_000

/**
 * What a report says of a failure: the error's whole message (a counterexample and a replay line
 * follow its first line), cut at {@link MAX_NOTE_CHARS}, without vitest's colour codes.
 */
export function failureNote(message: string | undefined): string | undefined {
  if (message === undefined) return undefined
  // eslint-disable-next-line no-control-regex -- the escape that starts a colour code
  const plain = message.replaceAll(/\u001b\[[0-9;]*m/g, '').trimEnd()
  return plain.length <= MAX_NOTE_CHARS ? plain : `${plain.slice(0, MAX_NOTE_CHARS)}… (${plain.length - MAX_NOTE_CHARS} more characters)`
}

export interface TestReport {
  readonly clause: string
  readonly name: string
  readonly state: 'passed' | 'failed' | 'skipped'
  /** Why it was skipped (from the group title), or the first error line of a failure. */
  readonly note?: string
  readonly durationMs: number
  /** The run was stopped (or its worker died) before this test ran; it counts as failed. */
  readonly notRun?: boolean
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
  /** Errors outside any test (the module failed to load, the run was stopped by the watchdog…). */
  readonly errors: readonly string[]
}

/** A result as it travels from the vitest host: the report plus what places it. */
export type Reported = TestReport & { readonly id: string; readonly suite: string }

/** The skip reason the kit appends to the title of a skipped test or group. */
export const SKIP_NOTE = /\(skipped: (.*)\)$/

/** A clause title without the skip reason the kit appends to skipped groups. */
export function bareTitle(title: string): string {
  return title.replace(SKIP_NOTE, '').trimEnd()
}

/** Suite and clause of a test from the titles of its enclosing groups, outermost first. */
export function placeOf(path: readonly string[]): { suite: string; clause: string } {
  return { suite: path[0] ?? '', clause: path[1] ?? path[0] ?? '(top level)' }
}

export function publicReport({ id: _id, suite: _suite, ...test }: Reported): TestReport {
  return test
}

export function summarize(module: string, tests: readonly Reported[], errors: string[], durationMs: number): ConformanceReport {
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
    durationMs,
    clauses: [...clauses].map(([clause, c]) => ({ clause, passed: c.passed, failed: c.failed, skipped: c.skipped, skipReasons: [...c.reasons] })),
    tests: tests.map(publicReport),
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
  const failures = report.tests.filter((t) => t.state === 'failed' && t.notRun !== true)
  const notRun = report.tests.filter((t) => t.notRun === true)
  if (failures.length > 0 || notRun.length > 0) {
    out.push('', 'failures:')
    for (const f of failures) out.push(`  ✗ ${f.clause} › ${f.name}`, ...(f.note ?? '').split('\n').map((l) => `      ${l}`.trimEnd()))
    if (notRun.length > 0) out.push(`  ✗ ${notRun.length} more tests ${notRun[0]?.note ?? 'not run'}`)
  }
  for (const error of report.errors) out.push('', `error: ${error}`)
  out.push(
    '',
    `${report.suite || report.module}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped (${(report.durationMs / 1000).toFixed(1)} s)`,
  )
  return out.join('\n')
}
