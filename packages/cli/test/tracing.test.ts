/**
 * `--trace` and the config's `tracing` (issue 35): the CLI in a child process with the OpenTelemetry
 * SDK registered as a user would (`NODE_OPTIONS=--import ./otel-setup.mjs`): a span per tool call,
 * the store calls under it, the fence's refusals too; without an SDK the commands work as before.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { builtTitle, missingBuild, removeTempDirs, REPO, runBin, tempDir } from './support.js'

afterAll(removeTempDirs)

interface SpanLine {
  readonly name: string
  readonly id: string
  readonly parent?: string
  readonly attributes: Record<string, unknown>
  readonly status: { code: number; message?: string }
}

const SETUP = pathToFileURL(join(REPO, 'packages/cli/test/fixtures/otel-setup.mjs')).href

describe.skipIf(missingBuild.length > 0)(builtTitle('seamfs --trace in a child process'), () => {
  it('with an SDK registered: a span per tool call, its store calls as children, refusals with their code', async () => {
    const cwd = tempDir('trace')
    const home = tempDir('trace-home')
    const spansFile = join(home, 'spans.jsonl')
    writeFileSync(join(cwd, 'a.txt'), 'one\n')
    const env = { NODE_OPTIONS: `--import ${SETUP}`, SEAMFS_TEST_SPANS: spansFile }
    const read = await runBin(['--trace', 'read', 'a.txt'], { cwd, home, env })
    expect(read.code, read.stderr).toBe(0)
    expect(read.stderr).toContain('; tracing on\n')
    const denied = await runBin(['--trace', 'read', '/etc/hostname'], { cwd, home, env })
    expect(denied.code).toBe(1)
    const spans = readFileSync(spansFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SpanLine)
    const tools = spans.filter((s) => s.name === 'execute_tool read')
    expect(tools).toHaveLength(2)
    const [ok, refused] = tools as [SpanLine, SpanLine]
    expect(ok.attributes).toMatchObject({ 'gen_ai.tool.name': 'read', 'file.path': 'a.txt', 'seamfs.backend': 'LocalFileSystem' })
    expect(ok.status.code).not.toBe(2)
    const under = spans.filter((s) => s.parent === ok.id).map((s) => s.name)
    expect(
      under.some((n) => ['seamfs read', 'seamfs open', 'seamfs stream'].includes(n)),
      under.join(', '),
    ).toBe(true)
    expect(refused.attributes['error.type']).toBe('FS_SANDBOX_DENIED')
    expect(refused.status).toEqual({ code: 2, message: 'FS_SANDBOX_DENIED' })
    expect(JSON.stringify(spans)).not.toContain('one\\n')
  })

  it('without an SDK, --trace changes nothing the user sees but the serving line; a bad tracing value is a config error', async () => {
    const cwd = tempDir('trace-off')
    const home = tempDir('trace-off-home')
    writeFileSync(join(cwd, 'a.txt'), 'one\n')
    const plain = await runBin(['read', 'a.txt'], { cwd, home })
    const traced = await runBin(['--trace', 'read', 'a.txt'], { cwd, home })
    expect(traced.code).toBe(0)
    expect(traced.stdout).toBe(plain.stdout)
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: 'file:.', tracing: 'yes' }))
    expect(await runBin(['ls'], { cwd, home })).toMatchObject({ code: 2, stderr: 'seamfs: config: tracing: expected true or false, found the string "yes"\n' })
  })
})
