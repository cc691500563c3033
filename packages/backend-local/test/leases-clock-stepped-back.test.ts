/**
 * staleReason takes over any entry whose time lies more than a lease in the future —
 * even one whose holder is a live process on this very host. A wall clock stepped back (NTP step,
 * VM restore, an admin's `date -s`) by more than the lease makes every live entry look like that
 * until its holder's next renewal (up to a third of the lease later): waiters then break live
 * locks, while the holders' own check (Date.now() − lastRenewed, now negative) still passes.
 * The README says "a time in the future counts as 120 s", not "is taken over at once".
 *
 * The step back is simulated by moving the live holder's entry an hour ahead (the same picture).
 */
import { spawn } from 'node:child_process'
import { lutimesSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { lockNameOf } from '../src/leases.js'
import { scratchDir, tracked } from './scratch.js'

const DIST = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href

/** A live holder on this host: an edit that stays inside its critical section until killed. */
const HOLDER = `
import { LocalFileSystem } from ${JSON.stringify(DIST)}
setInterval(() => {}, 1000)
const fs = new LocalFileSystem({ cwd: process.argv[1], hooks: { beforeCommit: () => { process.stdout.write('holding\\n'); return new Promise(() => {}) } } })
await fs.editText(await fs.resolve('f.txt'), { oldString: 'END', newString: 'HOLDER\\nEND', replaceAll: false })
`

describe('a live holder on this host, its entry dated in the future (the clock stepped back)', () => {
  it('is not taken over while its process lives: the waiter waits (busy after lockWaitMs)', { timeout: 15_000 }, async () => {
    const root = scratchDir('review-clock')
    writeFileSync(join(root, 'f.txt'), 'base\nEND\n')
    const child = tracked(spawn(process.execPath, ['--input-type=module', '-e', HOLDER, root], { stdio: ['ignore', 'pipe', 'inherit'] }))
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('holding') && resolve())
      child.on('exit', () => reject(new Error('the holder ended')))
    })
    const hour = new Date(Date.now() + 3_600_000)
    lutimesSync(join(root, lockNameOf('f.txt')), hour, hour)

    const waiter = new LocalFileSystem({ cwd: root, lockWaitMs: 600 })
    let code: string
    try {
      await waiter.editText(await waiter.resolve('f.txt'), { oldString: 'END', newString: 'WAITER\nEND', replaceAll: false })
      code = 'ok'
    } catch (err) {
      code = isFsError(err) ? err.code : String(err)
    }
    expect(child.exitCode, 'the holder is alive, inside its critical section').toBe(null)
    expect(code, `the waiter took the lock of a live holder on this host; file now: ${JSON.stringify(readFileSync(join(root, 'f.txt'), 'utf8'))}`).toBe(
      'FS_IO_ERROR',
    )
  })
})
