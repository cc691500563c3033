/**
 * A regression guard: openVerified retries when the descriptor's path is not the
 * key but every directory on the way is still real — exactly the case of a racing process that
 * swaps the FILE itself (the last component) for a symlink to a file outside the root. The retry
 * must never return a descriptor it did not verify: reads and edits through the sandbox
 * (workspace-write, confined reads) during 1.5 s of such swaps return no outside byte and change
 * nothing outside.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { DESCRIPTOR_PATHS } from '../src/anchor.js'

const SECRET = 'OUTSIDE SECRET'

/** Swaps <ws>/f.txt with a symlink to <outside>/secret.txt (atomic renames) until `ms` have passed. */
const SWAPPER = `
const { renameSync, symlinkSync } = require('node:fs')
const [ws, secret, ms] = [process.argv[1], process.argv[2], Number(process.argv[3])]
symlinkSync(secret, ws + '/.link')
const end = Date.now() + ms
let swaps = 0
const mv = (a, b) => { try { renameSync(ws + '/' + a, ws + '/' + b) } catch {} }
while (Date.now() < end) { mv('f.txt', '.real'); mv('.link', 'f.txt'); mv('f.txt', '.link'); mv('.real', 'f.txt'); swaps++ }
process.stdout.write(String(swaps))
`

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-review-final-swap-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe.skipIf(!DESCRIPTOR_PATHS)('the file itself swapped for a link to outside, many times a millisecond', () => {
  it('reads and edits never return or change an outside byte', { timeout: 20_000 }, async () => {
    const ws = join(base, 'ws')
    const outside = join(base, 'outside')
    mkdirSync(ws)
    mkdirSync(outside)
    writeFileSync(join(ws, 'f.txt'), 'inside\nEND\n')
    writeFileSync(join(outside, 'secret.txt'), `${SECRET}\nEND\n`)
    const outsideStat = statSync(join(outside, 'secret.txt'))
    const fs = new SandboxedFileSystem(new LocalFileSystem({ cwd: ws }), { mode: 'workspace-write', workspaceRoot: ws })
    const child = spawn(process.execPath, ['-e', SWAPPER, ws, join(outside, 'secret.txt'), '1500'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let swaps = ''
    child.stdout.on('data', (d: Buffer) => (swaps += d.toString()))
    const done = new Promise((r) => child.on('close', r))
    let running = true
    void done.then(() => (running = false))
    const outputs: string[] = []
    const codes = new Map<string, number>()
    for (let i = 0; running; i++) {
      try {
        const t = await fs.resolve('f.txt')
        if (i % 3 === 0) outputs.push(await fs.readText(t))
        else if (i % 3 === 1) await fs.editText(t, { oldString: 'END', newString: `e${i}\nEND`, replaceAll: false })
        else outputs.push((await fs.stat(t))?.type ?? 'none')
        codes.set('ok', (codes.get('ok') ?? 0) + 1)
      } catch (err) {
        const code = isFsError(err) ? err.code : String(err)
        codes.set(code, (codes.get(code) ?? 0) + 1)
        outputs.push(String(err))
      }
    }
    await done
    expect(Number(swaps)).toBeGreaterThan(100)
    expect((codes.get('ok') ?? 0) > 0, JSON.stringify([...codes])).toBe(true)
    expect(outputs.filter((o) => o.includes(SECRET))).toEqual([])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\nEND\n`)
    expect(statSync(join(outside, 'secret.txt')).mtimeMs).toBe(outsideStat.mtimeMs)
  })
})
