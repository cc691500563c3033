/**
 * The CLI's run-count options: `--thorough` takes ten times the module's runs of the model-based and
 * generative tests, `--seed` another seed for both; a seed that is not a 32-bit integer is a usage error.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { ConformanceReport } from '@seamfs/conformance/runner'

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const EXAMPLE = fileURLToPath(new URL('../examples/map-conformance.ts', import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'seamfs-kit-options-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 170_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr })
    })
  })
}

describe('seamfs-conformance --thorough and --seed', () => {
  it('--thorough --seed 7: the model-based test runs ten times the module’s 200 runs from seed 7, and passes', async () => {
    const json = join(out, 'thorough.json')
    const { code, stderr } = await run([EXAMPLE, '--thorough', '--seed', '7', '--quiet', '--json', json])
    const report = JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport
    expect(code, stderr).toBe(0)
    const model = report.tests.find((t) => t.clause === 'model-based')
    expect(model?.name).toMatch(/\(seed 7, 2000 runs/)
    expect(report.clauses.find((c) => c.clause === 'generative')?.passed).toBeGreaterThan(3)
  }, 180_000)

  it('a module path that names no file is a usage error: exit 2, no report', async () => {
    const { code, stdout, stderr } = await run([join(out, 'no-such-module.ts'), '--quiet'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`seamfs-conformance: no module at ${join(out, 'no-such-module.ts')}\n`)
  })

  it.each(['x', '1.5', '2147483648', ''])('--seed %j is a usage error: exit 2', async (seed) => {
    const { code, stderr } = await run([EXAMPLE, '--seed', seed])
    expect(code).toBe(2)
    expect(stderr).toMatch(/^--seed: expected an integer/)
  })
})

describe('a model-based failure in the report', () => {
  it('carries its counterexample and replay line, in the text report and in --json', async () => {
    // Broken: stat reports a cached size, so the model sees a wrong size after an overwrite.
    const variant = fileURLToPath(new URL('./broken/stat-size-cached.ts', import.meta.url))
    const json = join(out, 'model-failure.json')
    const { code, stdout } = await run([variant, '--quiet', '--json', json])
    expect(code).toBe(1)
    const report = JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport
    const model = report.tests.find((t) => t.clause === 'model-based')
    expect(model?.state).toBe('failed')
    expect(model?.note).toMatch(/^model-based test failed after \d+ runs\.\nCounterexample: \[files\(/)
    const replay = /Replay: SEAMFS_MODEL_SEED=(-?\d+) SEAMFS_MODEL_PATH=[\d:]+ npx vitest run -t "model-based"/.exec(model?.note ?? '')
    expect(replay, model?.note).not.toBeNull()
    // The text report prints the whole note, each line indented under the failure.
    expect(stdout).toContain(`      Counterexample: [files(`)
    expect(stdout).toContain(`      ${replay?.[0] ?? 'no replay line'}`)
  }, 180_000)
})
