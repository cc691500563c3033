/**
 * Breaking a stale lock entry is "inspect, compare token, unlink" by path, not atomic.
 * Two waiters that both found one stale entry (its holder died): the first breaks it and takes the
 * lock (a new entry); the second, which had already inspected and matched the stale entry, then
 * unlinks whatever is at the name — the first one's live entry — and takes the lock too. Two
 * holders at once: here the second (a guarded remove) deletes the edit the first reported
 * successful. The window between the inspect and the unlink is widened with strace's syscall
 * delay injection (a preemption of the second process there does the same); the first process is
 * this test process.
 *
 * clearIfStale (the residue sweep of every write, and remove) has the same window.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { formatLeaseRecord, HOST_ID, pidIsAlive } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { lockNameOf } from '../src/leases.js'
import { scratchDir, tracked } from './scratch.js'

const DIST = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href

const STRACE: boolean = (() => {
  try {
    execFileSync('strace', ['-qq', '-o', '/dev/null', '-e', 'trace=none', 'true'], { stdio: 'ignore', timeout: 5000 })
    return true
  } catch {
    return false
  }
})()

/** The second breaker: a remove guarded by the version it was given, paused between its guard and the unlink. */
const BREAKER = `
import { existsSync } from 'node:fs'
import { LocalFileSystem } from ${JSON.stringify(DIST)}
const [root, version] = process.argv.slice(1)
const fs = new LocalFileSystem({ cwd: root, lockWaitMs: 6000, hooks: { beforeMutate: async () => {
  process.stdout.write('B1-in\\n')
  while (!existsSync(root + '/../go-B1')) await new Promise((r) => setTimeout(r, 10))
} } })
let result
try {
  await fs.remove(await fs.resolve('f.txt'), { expected: { version } })
  result = 'ok'
} catch (err) { result = err?.code ?? String(err) }
process.stdout.write('B1-result ' + result + '\\n')
process.exit(0)
`

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

async function until(what: string, ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (ok()) return true
    await sleep(5)
  }
  if (what !== '') throw new Error(`timed out waiting for ${what}`)
  return false
}

describe.skipIf(!STRACE)(`two waiters break one stale lock entry${STRACE ? '' : ' — SKIPPED: needs strace'}`, () => {
  it("only one of them holds the lock: the breaker that lost the race does not unlink the winner's entry", { timeout: 20_000 }, async () => {
    const base = scratchDir('review-breakers')
    const root = join(base, 'ws')
    mkdirSync(root)
    writeFileSync(join(root, 'f.txt'), 'base\nEND\n')
    // A holder on this host that died: its entry is stale at once for everyone.
    const dead = spawn(process.execPath, ['-e', ''])
    const deadPid = dead.pid!
    await new Promise((r) => dead.on('exit', r))
    expect(pidIsAlive(deadPid)).toBe(false)
    symlinkSync(formatLeaseRecord({ host: HOST_ID, pid: deadPid, nonce: 'd'.repeat(16), leaseMs: 10_000 }), join(root, lockNameOf('f.txt')))

    const local = new LocalFileSystem({ cwd: root })
    const version = (await local.stat(await local.resolve('f.txt')))!.version

    // The second breaker, its first unlink(2) (the stale entry's) delayed by 1.5 s at entry.
    const log = join(base, 'strace.log')
    const sc = ['unlink', 'unlinkat'].join(',')
    const b1 = spawn(
      'strace',
      [
        '-f',
        '-qq',
        '-o',
        log,
        '-e',
        `trace=${sc}`,
        '-e',
        `inject=${sc}:delay_enter=1500000:when=1`,
        process.execPath,
        '--input-type=module',
        '-e',
        BREAKER,
        root,
        version,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    tracked(b1)
    setTimeout(() => b1.kill('SIGKILL'), 15_000).unref()
    let out = ''
    b1.stdout.on('data', (d: Buffer) => (out += d.toString()))
    // It has inspected the stale entry, matched its token, and is inside the unlink.
    await until('the second breaker to reach its unlink', () => existsSync(log) && readFileSync(log, 'utf8').includes('.seamfs-lock-'), 8000)

    // The first breaker (this process): breaks the stale entry, takes the lock, edits.
    let b1InsideWhileHeld = false
    const first = new LocalFileSystem({
      cwd: root,
      hooks: {
        beforeCommit: async () => {
          // Hold the lock until the other breaker's delayed unlink has run (or 3 s): it must not get in.
          b1InsideWhileHeld = await until('', () => out.includes('B1-in'), 3000)
        },
      },
    })
    let edit: string
    try {
      await first.editText(await first.resolve('f.txt'), { oldString: 'END', newString: 'FIRST-EDIT\nEND', replaceAll: false })
      edit = 'ok'
    } catch (err) {
      edit = isFsError(err) ? err.code : String(err)
    }
    writeFileSync(join(base, 'go-B1'), '')
    await until('the second breaker to finish', () => out.includes('B1-result'), 10_000)
    const removed = out
      .split('\n')
      .find((l) => l.startsWith('B1-result'))!
      .split(' ')[1]
    const survives = existsSync(join(root, 'f.txt')) && readFileSync(join(root, 'f.txt'), 'utf8').includes('FIRST-EDIT')

    expect.soft(b1InsideWhileHeld, 'the second breaker got into its critical section while the first held the lock').toBe(false)
    expect({ edit, removed, survives }, 'an edit reported successful, then removed by a guard that never saw it').not.toEqual({
      edit: 'ok',
      removed: 'ok',
      survives: false,
    })
  })
})
