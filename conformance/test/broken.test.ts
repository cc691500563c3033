import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { ConformanceReport } from '@seamfs/conformance/runner'

// The kit must be able to fail: each deliberately broken backend is run through
// the real CLI (a separate vitest run), and must be caught by the right clause.
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'seamfs-kit-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly report: ConformanceReport
}

function runCli(module: string): Promise<CliRun> {
  const json = join(out, `${module.replaceAll(/[^a-z]/gi, '_')}.json`)
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, here(module), '--json', json, '--quiet'], { timeout: 180_000 }, (err, stdout) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      try {
        resolve({ code, stdout, report: JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport })
      } catch (parseErr) {
        reject(new Error(`no report from the CLI (exit ${code}): ${stdout}`, { cause: parseErr }))
      }
    })
  })
}

const failedIn = (report: ConformanceReport, clause: string): number => report.clauses.find((c) => c.clause === clause)?.failed ?? 0

describe('the kit catches broken backends', () => {
  const cases: ReadonlyArray<readonly [string, string, readonly string[]]> = [
    ['broken/ignores-guard.ts', 'ignores replaceIfVersion', ['write', 'CAS races']],
    ['broken/in-place.ts', 'writes in place (non-atomic)', ['atomicity']],
    ['broken/locale-order.ts', 'lists in localeCompare order', ['listing']],
    ['broken/weak-version.ts', 'version ignores same-size rewrites', ['versions', 'versions: external changes']],
    ['broken/raw-errors.ts', 'throws raw errors', ['errors']],
  ]
  for (const [module, what, clauses] of cases) {
    it(`a backend that ${what} fails ${clauses.join(' and ')}; the CLI exits 1`, async () => {
      const { code, report } = await runCli(module)
      expect(code).toBe(1)
      for (const clause of clauses) expect(failedIn(report, clause), clause).toBeGreaterThan(0)
      expect(report.passed).toBeGreaterThan(50)
    }, 180_000)
  }
})

describe('the CLI on the worked example', () => {
  it('runs the Map example, prints a per-clause table and exits 0', async () => {
    const { code, stdout, report } = await runCli('../examples/map-conformance.ts')
    expect(code).toBe(0)
    expect(report.failed).toBe(0)
    expect(report.passed).toBeGreaterThan(100)
    expect(stdout).toMatch(/^clause\s+passed\s+failed\s+skipped/m)
    expect(stdout).toMatch(/^model-based\s+1\s+0\s+0/m)
    const symlinks = report.clauses.find((c) => c.clause === 'listing: symlinks')
    expect(symlinks?.skipReasons).toEqual(['capabilities.symlinks is false, no external.symlink hook'])
  }, 180_000)
})
