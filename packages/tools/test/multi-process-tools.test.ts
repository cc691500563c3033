/**
 * Several processes on one workspace, driven as the model drives it: 3
 * processes, each with its own tools (createFileTools over a local backend, read-before-write on),
 * 3 sessions each, loop read → edit on 3 shared files for 2 s. Every edit a tool reported
 * successful must be in the file exactly once; the losers are told FS_STALE_VERSION (re-read),
 * never anything else. The children run the built packages (npm test builds first).
 */
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { scratchDir } from '../../backend-local/test/scratch.js'

const TOOLS = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const LOCAL = fileURLToPath(new URL('../../backend-local/dist/index.js', import.meta.url))
const CORE = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url))
const FILES = ['a.txt', 'b.txt', 'c.txt']
const RACE_MS = 2_000

const AGENT = `
const [tools, local, core, root, id, raceMs, filesJson] = process.argv.slice(1)
const { createFileToolsByName } = await import(tools)
const { LocalFileSystem } = await import(local)
const { ObservationPolicy } = await import(core)
const t = createFileToolsByName({ fs: new LocalFileSystem({ cwd: root }), policy: new ObservationPolicy() })
const files = JSON.parse(filesJson)
const deadline = Date.now() + Number(raceMs)
const ok = [], codes = {}
async function session(s) {
  const context = { session: id + '-' + s }
  for (let i = 0; Date.now() < deadline; i++) {
    const file_path = files[(i + s) % files.length]
    const tag = id + '-' + s + '-' + i
    await t.read.execute({ file_path }, context)
    const r = await t.edit.execute({ file_path, old_string: 'END\\n', new_string: tag + '\\nEND\\n' }, context)
    if (r.isError) codes[r.code] = (codes[r.code] ?? 0) + 1
    else ok.push(tag)
  }
}
await Promise.all([0, 1, 2].map(session))
process.stdout.write(JSON.stringify({ ok, codes }) + '\\n', () => process.exit(0))
`

function agent(root: string, id: string): Promise<{ ok: string[]; codes: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', AGENT, TOOLS, LOCAL, CORE, root, id, String(RACE_MS), JSON.stringify(FILES)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), RACE_MS + 20_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as { ok: string[]; codes: Record<string, number> })
      } catch {
        reject(new Error(`agent ${id} ended with ${String(code)}: ${err.slice(-2000)}`))
      }
    })
  })
}

describe('3 processes × 3 sessions edit 3 shared files through the tools', () => {
  it('every edit a tool reported successful is there once; the others were told FS_STALE_VERSION', { timeout: 40_000 }, async () => {
    const root = scratchDir('tools-multi')
    for (const name of FILES) writeFileSync(join(root, name), 'END\n')
    const reports = await Promise.all(['p0', 'p1', 'p2'].map((id) => agent(root, id)))
    const lines = new Map<string, number>()
    for (const name of FILES) {
      const content = readFileSync(join(root, name), 'utf8')
      expect(content.endsWith('END\n')).toBe(true)
      for (const line of content.split('\n').slice(0, -2)) lines.set(line, (lines.get(line) ?? 0) + 1)
    }
    const ok = reports.flatMap((r) => r.ok)
    const codes = new Set(reports.flatMap((r) => Object.keys(r.codes)))
    console.log(`3 processes × 3 sessions through the tools, ${RACE_MS} ms: ${ok.length} edits; failures ${JSON.stringify(reports.map((r) => r.codes))}`)
    expect(ok.length).toBeGreaterThan(3)
    expect(ok.filter((tag) => lines.get(tag) !== 1)).toEqual([])
    // Nothing landed that was not reported (each line is a reported edit).
    expect([...lines.keys()].filter((line) => !ok.includes(line))).toEqual([])
    expect([...codes].filter((code) => code !== 'FS_STALE_VERSION')).toEqual([])
  })
})
