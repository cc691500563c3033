/**
 * The main job: `npm start` runs `seamfs conformance --builtin`, the kit
 * against the embedded backends (memory, and local in a temporary directory),
 * with no server and no configuration. Run here as the BUILT bin in a child
 * process, in a fresh temporary cwd with a clean HOME; the report is parsed,
 * not just grepped. Also `seamfs conformance <module>` on the kit's own
 * TypeScript example module.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { builtTitle, missingBuild, removeTempDirs, REPO, runBin, tempDir } from './support.js'

const HEADER = /^clause\s{2,}passed {2}failed {2}skipped {2}skip reason$/
const ROW = /^(?<clause>\S.*?) {2,}(?<passed>\d+) {2,}(?<failed>\d+) {2,}(?<skipped>\d+)(?: {2}(?<reason>.*))?$/
const SUMMARY = /^(?<suite>.+): (?<passed>\d+) passed, (?<failed>\d+) failed, (?<skipped>\d+) skipped \(\d+\.\d s\)$/

interface Row {
  readonly clause: string
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  readonly reason: string
}

interface Table {
  readonly rows: Row[]
  readonly summary: { suite: string; passed: number; failed: number; skipped: number }
}

/** Every per-clause table of a report: header, rule, rows up to the blank line, then the summary line. */
function parseTables(stdout: string): Table[] {
  const lines = stdout.split('\n')
  const tables: Table[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!HEADER.test(lines[i] ?? '')) continue
    expect(lines[i + 1]).toMatch(/^-+(?: {2}-+){4}$/)
    const rows: Row[] = []
    let j = i + 2
    for (; (lines[j] ?? '') !== ''; j++) {
      const m = ROW.exec(lines[j] ?? '')
      if (m?.groups === undefined) throw new Error(`not a table row: ${JSON.stringify(lines[j])}`)
      const g = m.groups
      rows.push({
        clause: g['clause'] ?? '',
        passed: Number(g['passed']),
        failed: Number(g['failed']),
        skipped: Number(g['skipped']),
        reason: g['reason'] ?? '',
      })
    }
    const s = SUMMARY.exec(lines[j + 1] ?? '')?.groups
    if (s === undefined) throw new Error(`no summary line after the table: ${JSON.stringify(lines[j + 1])}`)
    tables.push({ rows, summary: { suite: s['suite'] ?? '', passed: Number(s['passed']), failed: Number(s['failed']), skipped: Number(s['skipped']) } })
    i = j + 1
  }
  return tables
}

const sum = (rows: readonly Row[], key: 'passed' | 'failed' | 'skipped'): number => rows.reduce((n, r) => n + r[key], 0)

afterAll(removeTempDirs)

describe.skipIf(missingBuild.length > 0)(builtTitle('the main job: seamfs conformance'), () => {
  it('--builtin --quiet: exit 0, both per-clause tables with no failure, and the OK line', { timeout: 180_000 }, async () => {
    const cwd = tempDir('main')
    const home = tempDir('home')
    const r = await runBin(['conformance', '--builtin', '--quiet', '--json', 'report.json'], { cwd, home, timeoutMs: 170_000 })
    expect(r.stderr).toBe('') // --quiet: no progress
    expect(r.code).toBe(0)

    expect(r.stdout).toContain('\n== conformance: memory ==\n')
    expect(r.stdout).toContain('\n== conformance: local ==\n')
    expect(r.stdout.indexOf('== conformance: memory ==')).toBeLessThan(r.stdout.indexOf('== conformance: local =='))
    const tables = parseTables(r.stdout)
    expect(tables).toHaveLength(2)
    expect(tables.map((t) => t.summary.suite)).toEqual(['conformance: MemoryFileSystem', 'conformance: LocalFileSystem'])
    for (const { rows, summary } of tables) {
      expect(rows.length).toBeGreaterThan(10)
      for (const row of rows) expect(row.failed, `${summary.suite} › ${row.clause}`).toBe(0)
      expect(rows.map((row) => row.clause)).toEqual(
        expect.arrayContaining(['resolve/identity', 'write', 'edit', 'versions', 'CAS races', 'errors', 'model-based']),
      )
      expect(rows.find((row) => row.clause === 'model-based')?.passed).toBeGreaterThan(0)
      expect(new Set(rows.map((row) => row.clause)).size).toBe(rows.length)
      // The summary line agrees with the table.
      expect(summary).toMatchObject({ failed: 0, passed: sum(rows, 'passed'), skipped: sum(rows, 'skipped') })
      expect(summary.passed).toBeGreaterThan(50)
    }
    // Both embedded backends implement the whole contract: the same clauses, nothing skipped but the
    // cross-instance races on memory (one process by nature: no crossProcess hook) and the read-only
    // profile's clause (both write), which say so.
    expect(tables[1]?.rows.map((row) => row.clause)).toEqual(tables[0]?.rows.map((row) => row.clause))
    const readOnly = (row: { readonly clause: string }): boolean => row.clause === 'read-only store'
    for (const t of tables) {
      for (const row of t.rows.filter((row) => row.skipped > 0)) {
        if (readOnly(row)) {
          expect(row.reason).toMatch(/capabilities\.readOnly is not declared/)
          continue
        }
        expect(row.clause, t.summary.suite).toMatch(/^cross-instance races/)
        expect(row.reason).toMatch(/no crossProcess hook/)
      }
    }
    const local = tables.find((t) => /Local/.test(t.summary.suite))
    expect(local?.summary.skipped, 'local runs the cross-instance races').toBe(sum(local?.rows.filter(readOnly) ?? [], 'skipped'))
    expect(r.stdout).not.toMatch(/^failures:$/m)
    expect(r.stdout).not.toMatch(/^error: /m)

    const total = tables.reduce((n, t) => n + t.summary.passed, 0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.at(-1)).toBe(`OK: 2 backends, ${total} tests passed`)

    // --json: the same two reports, machine-readable, next to where it ran.
    const json = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as Array<{ suite: string; passed: number; failed: number; errors: unknown[] }>
    expect(json.map((report) => [report.suite, report.passed, report.failed, report.errors])).toEqual(
      tables.map((t) => [t.summary.suite, t.summary.passed, 0, []]),
    )
  })

  it(
    '<module> --thorough --seed 11: the kit on a TypeScript factory module, ten times the runs from that seed, with progress on stderr',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir('module')
      const home = tempDir('home')
      const module = join(REPO, 'conformance/examples/map-conformance.ts')
      const r = await runBin(['conformance', module, '--thorough', '--seed', '11'], { cwd, home, timeoutMs: 110_000 })
      expect(r.code).toBe(0)
      const [table, ...more] = parseTables(r.stdout)
      expect(more).toHaveLength(0)
      if (table === undefined) throw new Error(`no report on stdout:\n${r.stdout}`)
      expect(table.summary).toMatchObject({ suite: 'conformance: MapFileSystem (example)', failed: 0 })
      expect(table.summary.passed).toBeGreaterThan(50)
      for (const row of table.rows) expect(row.failed, row.clause).toBe(0)
      expect(table.rows.find((row) => row.clause === 'model-based')?.passed).toBe(1)
      // The example has no symlinks, no mode bits and no mtime: those clauses are skipped, and say why.
      const skipped = table.rows.filter((row) => row.skipped > 0)
      expect(skipped.length).toBeGreaterThan(0)
      for (const row of skipped) {
        // The example gives no crossProcess hook: its cross-instance races are skipped, and say why.
        if (row.clause.startsWith('cross-instance races')) {
          expect(row.reason).toMatch(/no crossProcess hook/)
          continue
        }
        // The example writes: the read-only profile's clause is skipped, and says why.
        if (row.clause === 'read-only store') {
          expect(row.reason).toMatch(/capabilities\.readOnly is not declared/)
          continue
        }
        // The example does not bind its reads to keys: that claim's probe is skipped, and says why.
        if (row.clause === 'capabilities: key-bound reads') {
          expect(row.reason).toMatch(/capabilities\.keyBoundReads is not declared/)
          continue
        }
        const cap = row.clause === 'modification time' ? 'mtime' : /permissions$|^generative: modes$/.test(row.clause) ? 'permissions' : 'symlinks'
        if (cap === 'symlinks') expect(row.clause).toMatch(/symlinks$/)
        expect(row.reason).toMatch(new RegExp(`capabilities\\.${cap} is`))
      }
      expect(table.summary.skipped).toBe(sum(table.rows, 'skipped'))
      // Progress while it runs: one line per test, numbered, on stderr.
      const progress = r.stderr.split('\n').filter((line) => line !== '')
      expect(progress).toHaveLength(table.summary.passed + table.summary.skipped)
      expect(progress[0]).toMatch(/^\[kit {3}1\] ✓ public methods are final › /)
      for (const line of progress) expect(line).toMatch(/^\[kit +\d+\] [✓-] .+ › .+$/)
      expect(progress.find((line) => line.includes('model-based › '))).toMatch(/\(seed 11, 2000 runs/)
    },
  )

  it.each(['x', '1.5', '2147483648'])('seamfs conformance --seed %j is a usage error: exit 2', async (seed) => {
    const r = await runBin(['conformance', '--seed', seed, 'm.js'], { cwd: tempDir('usage'), home: tempDir('home') })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--seed <n>.*expected an integer from -2147483648 to 2147483647/)
  })

  it('a module that fails to load: the report carries the error, exit 1', { timeout: 120_000 }, async () => {
    const cwd = tempDir('broken')
    writeFileSync(join(cwd, 'broken.mjs'), "throw new Error('boom at load')\n")
    const r = await runBin(['conformance', '--quiet', 'broken.mjs'], { cwd, home: tempDir('home'), timeoutMs: 110_000 })
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^error: boom at load$/m)
    expect(r.stdout).toMatch(/broken\.mjs: 0 passed, 0 failed, 0 skipped \(\d+\.\d s\)\n$/)
  })

  it.each<[args: string[], message: string]>([
    [['conformance', 'no-such-module.js'], 'error: no module at no-such-module.js'],
    [['conformance', '--builtin', 'm.js'], 'error: give a module or --builtin, not both'],
    [['--fs', 'memory:', 'conformance'], 'error: conformance runs on a module exporting conformance options, or --builtin; not on --fs'],
  ])('seamfs %j is a usage error: exit 2', async (args, message) => {
    const r = await runBin(args, { cwd: tempDir('usage'), home: tempDir('home') })
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: `${message}\n(add --help for usage)\n` })
  })
})
