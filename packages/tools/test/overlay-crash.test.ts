/**
 * A commit killed part way (issue 36): an overlay over a local directory, its changes kept on disk,
 * committed by a child process that is killed (SIGKILL) at growing delays after the commit began.
 * After each kill every file of the directory is whole, its old content or the overlay's; the
 * overlay still holds every change; and a commit run again finishes the job, naming what had
 * already landed. Bounded: at most 8 kills.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { OverlayFileSystem } from '@seamfs/tools'

const TOOLS = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const LOCAL = fileURLToPath(new URL('../../backend-local/dist/index.js', import.meta.url))
const FILES = 400

const COMMITTER = `
const [tools, local, lowerDir, upperDir] = process.argv.slice(1)
const { OverlayFileSystem } = await import(tools)
const { LocalFileSystem } = await import(local)
const overlay = await OverlayFileSystem.open(new LocalFileSystem({ cwd: lowerDir }), { upper: { fs: new LocalFileSystem({ cwd: upperDir }), dir: upperDir } })
process.stdout.write('committing\\n')
const report = await overlay.commit()
process.stdout.write(JSON.stringify(report.outcome) + '\\n')
`

/** Runs the committer; kills it `delayMs` after it says the commit began. Resolves to whether it was killed before the commit ended. */
function commitAndKill(lowerDir: string, upperDir: string, delayMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', COMMITTER, TOOLS, LOCAL, lowerDir, upperDir], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let timer: NodeJS.Timeout | undefined
    const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      if (timer === undefined && out.includes('committing\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs)
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(deadline)
      if (timer !== undefined) clearTimeout(timer)
      if (signal === 'SIGKILL') resolve(!out.includes('"committed"'))
      else if (code === 0) resolve(false)
      else reject(new Error(`the committer failed (${String(code)}): ${err}`))
    })
  })
}

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(!existsSync(TOOLS) || !existsSync(LOCAL))('OverlayFileSystem: a commit killed part way (needs the built packages: npx tsc -b)', () => {
  it('leaves every file whole and the overlay whole; the commit run again finishes it', async () => {
    const lowerDir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-crash-lower-'))
    const upperDir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-crash-upper-'))
    made.push(lowerDir, upperDir)
    for (let i = 0; i < FILES; i++) writeFileSync(join(lowerDir, `f${i}.txt`), `old ${i}\n`)
    const open = () => OverlayFileSystem.open(new LocalFileSystem({ cwd: lowerDir }), { upper: { fs: new LocalFileSystem({ cwd: upperDir }), dir: upperDir } })
    const overlay = await open()
    const expected: Record<string, string | undefined> = {}
    for (let i = 0; i < FILES; i++) {
      const target = await overlay.resolve(`f${i}.txt`)
      if (i % 3 === 0) {
        await overlay.writeText(target, `new ${i}\n`)
        expected[`f${i}.txt`] = `new ${i}\n`
      } else if (i % 3 === 1) {
        await overlay.remove(target)
        expected[`f${i}.txt`] = undefined
      } else expected[`f${i}.txt`] = `old ${i}\n`
      await overlay.writeText(await overlay.resolve(`n/n${i}.txt`), `created ${i}\n`)
      expected[`n/n${i}.txt`] = `created ${i}\n`
    }
    const changes = (await overlay.changes()).length

    let partial = 0
    for (const delayMs of [2, 5, 10, 20, 40, 80, 160, 320]) {
      const killed = await commitAndKill(lowerDir, upperDir, delayMs)
      if (!killed) break
      // Each file is whole: what it was, or what the overlay made it; the overlay still holds every change.
      let landed = 0
      for (const [path, want] of Object.entries(expected)) {
        const now = existsSync(join(lowerDir, path)) ? readFileSync(join(lowerDir, path), 'utf8') : undefined
        const was = path.startsWith('n/') ? undefined : `old ${path.slice(1, -4)}\n`
        expect([was, want], path).toContain(now)
        if (now !== was) landed++
      }
      expect((await (await open()).changes()).length).toBe(changes)
      if (landed > 0) partial++
    }
    expect(partial, 'no kill came while the commit was applying: the test did not test').toBeGreaterThan(0)

    const report = await (await open()).commit()
    expect(report.outcome).toBe('committed')
    expect(report.already.length).toBeGreaterThan(0)
    expect(report.already.length + report.standing.length).toBe(changes)
    for (const [path, want] of Object.entries(expected)) {
      expect(existsSync(join(lowerDir, path)) ? readFileSync(join(lowerDir, path), 'utf8') : undefined, path).toBe(want)
    }
    expect((await open()).size).toBe(0)
  })
})
