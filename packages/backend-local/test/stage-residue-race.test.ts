import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'

/** A pid above Linux's pid_max: never alive, so its stages are residue to every sweep. */
const DEAD_PID = 2 ** 22 + 11
const RACE_MS = 3000
const OUTSIDE_FILES = 200

/**
 * The planter, in its own process: over and over, it plants leftovers of a "dead writer" in the
 * workspace — a stage with a temp file that is a link to an outside file, a stage whose folder is
 * swapped for a link to the outside directory, and a link under a stage's name — for seamfs's
 * sweeps to find while they run.
 */
const PLANTER = `
const fs = require('node:fs')
const path = require('node:path')
const [work, outside, deadPid, raceMs] = process.argv.slice(1)
const dir = path.join(work, 'd')
const deadline = Date.now() + Number(raceMs)
const names = fs.readdirSync(outside)
let n = 0
const stages = Array.from({ length: 4 }, (_, k) => path.join(dir, '.seamfs-stage-' + deadPid + '-plant' + k))
function plant(stage) {
  fs.mkdirSync(stage)
  fs.symlinkSync(path.join(outside, names[0]), path.join(stage, '1.tmp'))
  // A folder holding decoys with the outside files' names, and a link to the outside directory, taking turns as "sub".
  fs.mkdirSync(path.join(stage, 'real'))
  fs.writeFileSync(path.join(stage, 'real', names[1]), 'decoy')
  fs.symlinkSync(outside, path.join(stage, 'link'))
  n++
}
let toggles = 0
while (Date.now() < deadline) {
  try { fs.mkdirSync(dir, { recursive: true }) } catch {}
  for (const stage of stages) {
    try {
      if (!fs.existsSync(stage)) plant(stage)
      toggles++
      fs.renameSync(path.join(stage, 'real'), path.join(stage, 'sub'))
      fs.renameSync(path.join(stage, 'sub'), path.join(stage, 'real'))
      fs.renameSync(path.join(stage, 'link'), path.join(stage, 'sub'))
      fs.renameSync(path.join(stage, 'sub'), path.join(stage, 'link'))
    } catch {}
  }
  try {
    fs.symlinkSync(outside, path.join(dir, '.seamfs-stage-' + deadPid + '-zlink' + (n % 10)))
  } catch {}
}
process.stdout.write(String(toggles))
`

let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  dirs = []
})

describe('staging leftovers planted by a racing process', () => {
  it(`writes, edits and deletes for ${RACE_MS / 1000} s among planted stages with links to the outside: no outside file is touched`, async () => {
    const outside = mkdtempSync(join(tmpdir(), 'seamfs-outside-'))
    const root = mkdtempSync(join(tmpdir(), 'seamfs-residue-'))
    dirs.push(outside, root)
    for (let i = 0; i < OUTSIDE_FILES; i++) writeFileSync(join(outside, `f${i}.txt`), `precious ${i}\n`)
    mkdirSync(join(root, 'work'))
    const fs = new LocalFileSystem({ cwd: join(root, 'work') })
    const planter = spawn(process.execPath, ['-e', PLANTER, join(root, 'work'), outside, String(DEAD_PID), String(RACE_MS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let planted = ''
    planter.stdout.on('data', (d: Buffer) => (planted += d.toString()))
    const exited = new Promise<void>((resolve) => planter.on('exit', () => resolve()))
    let operations = 0
    const deadline = Date.now() + RACE_MS
    for (let i = 0; Date.now() < deadline; i++) {
      const t = await fs.resolve(`d/f${i % 5}.txt`)
      try {
        if (i % 4 === 0) await fs.writeText(t, `content ${i}\n`)
        else if (i % 4 === 1) await fs.editText(t, { oldString: 'content', newString: 'edited', replaceAll: false })
        else if (i % 4 === 2) await fs.remove(t)
        // The delete tool's path: a recursive remove clears the stages it finds.
        else await fs.remove(await fs.resolve('d'), { recursive: true })
        operations++
      } catch (err) {
        if (!isFsError(err)) throw err
      }
      // Fresh instances sweep afresh (the sweep reads the directory when it changed since this instance left it).
      if (i % 20 === 0) await new LocalFileSystem({ cwd: join(root, 'work') }).writeText(await fs.resolve('d/g.txt'), `g ${i}\n`).catch(() => undefined)
    }
    await exited
    await fs.close()
    expect(readdirSync(outside).length).toBe(OUTSIDE_FILES)
    expect(Number(planted), 'the planter swapped links in and out').toBeGreaterThan(100)
    expect(operations).toBeGreaterThan(20)
    for (let i = 0; i < OUTSIDE_FILES; i++) expect(readFileSync(join(outside, `f${i}.txt`), 'utf8')).toBe(`precious ${i}\n`)
    // Removing the workspace through seamfs must not reach outside either.
    const whole = new LocalFileSystem({ cwd: root })
    await whole.remove(await whole.resolve('work'), { recursive: true }).catch((err: unknown) => {
      if (!isFsError(err)) throw err
    })
    expect(readdirSync(outside).length).toBe(OUTSIDE_FILES)
  }, 30_000)
})
