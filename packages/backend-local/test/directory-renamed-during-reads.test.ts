/**
 * openVerified retries a descriptor whose path is not the key only while every directory
 * on the way is still real. A directory renamed away by another (ordinary) process between the
 * open and the check makes realpath fail (ENOENT), which is taken for "a directory was swapped for
 * a link": the caller gets the security-flavoured retryable FS_IO_ERROR ("replaced … by a link?")
 * where the honest answer is FS_NOT_FOUND (the path no longer leads anywhere). No link is ever
 * involved here: a process renames d ↔ e back and forth.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { DESCRIPTOR_PATHS } from '../src/anchor.js'

const MOVER = `
const { renameSync } = require('node:fs')
const [ws, ms] = [process.argv[1], Number(process.argv[2])]
const end = Date.now() + ms
let n = 0
while (Date.now() < end) { try { renameSync(ws + '/d', ws + '/e'); renameSync(ws + '/e', ws + '/d'); n++ } catch {} }
process.stdout.write(String(n))
`

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-review-dirmoved-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe.skipIf(!DESCRIPTOR_PATHS)('reads while another process renames their directory back and forth (no link anywhere)', () => {
  it('never report a swapped link', { timeout: 20_000 }, async () => {
    const ws = join(base, 'ws')
    mkdirSync(join(ws, 'd'), { recursive: true })
    writeFileSync(join(ws, 'd', 'f.txt'), 'x\n')
    const fs = new LocalFileSystem({ cwd: ws })
    const target = await fs.resolve('d/f.txt')
    const child = spawn(process.execPath, ['-e', MOVER, ws, '1500'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let running = true
    const done = new Promise((r) => child.on('close', r))
    void done.then(() => (running = false))
    const codes = new Map<string, number>()
    const alarms: string[] = []
    while (running) {
      try {
        await fs.readText(target)
        codes.set('ok', (codes.get('ok') ?? 0) + 1)
      } catch (err) {
        const code = isFsError(err) ? err.code : String(err)
        codes.set(code, (codes.get(code) ?? 0) + 1)
        if (/replaced|link/.test(String((err as Error).message))) alarms.push((err as Error).message)
      }
      await new Promise((r) => setImmediate(r))
    }
    await done
    expect(alarms.length, `outcomes ${JSON.stringify([...codes])}; e.g. ${alarms[0] ?? ''}`).toBe(0)
  })
})
