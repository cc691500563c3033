/**
 * A holder frozen past its lease (SIGSTOP here; a VM pause, a long GC, a laptop lid alike)
 * must not commit over the writer who took its lock meanwhile — lease-lock.ts promises that
 * `assertHeld` catches it. But `renew` of an entry that is no longer the holder's returns quietly
 * (localLeaseStore.renew: token mismatch → nothing), and LeaseLocks#renew then stamps
 * `lastRenewed = now`. The first thing the resumed holder's event loop runs is its overdue renewal
 * timer, so `assertHeld` passes and the holder commits while the taker is inside its own critical
 * section. With a guarded remove as the taker (guard checked, then the unlink), the frozen
 * holder's edit is reported successful and then deleted: a lost update.
 *
 * Children run the built package (dist).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { scratchDir, tracked } from './scratch.js'

const DIST = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href

const WAIT_FOR = `
const { existsSync } = await import('node:fs')
const waitFor = async (file) => { while (!existsSync(file)) await new Promise((r) => setTimeout(r, 10)) }
`

/** The holder: an edit with a 300 ms lease that stops inside its critical section. */
const HOLDER = `
import { LocalFileSystem } from ${JSON.stringify(DIST)}
${WAIT_FOR}
const [root] = process.argv.slice(1)
const fs = new LocalFileSystem({ cwd: root, lockLeaseMs: 300, hooks: { beforeCommit: async () => {
  process.stdout.write('A-in\\n')
  await waitFor(root + '/../go-A')
  // The resumed process runs a little before it reaches the commit (its event loop turns).
  await new Promise((r) => setTimeout(r, 200))
} } })
let result
try {
  await fs.editText(await fs.resolve('f.txt'), { oldString: 'END', newString: 'A-EDIT\\nEND', replaceAll: false })
  result = 'ok'
} catch (err) { result = err?.code ?? String(err) }
process.stdout.write('A-result ' + result + '\\n')
process.exit(0)
`

/** The taker: a remove guarded by the version it saw, paused between its guard check and the unlink. */
const TAKER = `
import { LocalFileSystem } from ${JSON.stringify(DIST)}
${WAIT_FOR}
const [root, version] = process.argv.slice(1)
const fs = new LocalFileSystem({ cwd: root, lockLeaseMs: 300, lockWaitMs: 5000, hooks: { beforeMutate: async () => {
  process.stdout.write('B-in\\n')
  await waitFor(root + '/../go-B')
} } })
let result
try {
  await fs.remove(await fs.resolve('f.txt'), { expected: { version } })
  result = 'ok'
} catch (err) { result = err?.code ?? String(err) }
process.stdout.write('B-result ' + result + '\\n')
process.exit(0)
`

interface Child {
  readonly proc: ChildProcess
  said(word: string): Promise<string>
}

function start(script: string, args: string[]): Child {
  const proc = tracked(spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }))
  const timer = setTimeout(() => proc.kill('SIGKILL'), 8000)
  proc.on('exit', () => clearTimeout(timer))
  let out = ''
  const waiters: Array<() => void> = []
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString()
    for (const w of waiters.splice(0)) w()
  })
  return {
    proc,
    said: (word) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const line = out.split('\n').find((l) => l.startsWith(word))
          if (line !== undefined) resolve(line)
          else if (proc.exitCode !== null || proc.signalCode !== null) reject(new Error(`child ended without "${word}": ${out}`))
          else waiters.push(check)
        }
        proc.on('exit', () => check())
        check()
      }),
  }
}

describe('a holder frozen past its lease, its lock taken over meanwhile', () => {
  it('does not commit after it resumes: an edit reported successful is never then removed by the taker', { timeout: 15_000 }, async () => {
    const base = scratchDir('review-frozen')
    const root = join(base, 'ws')
    mkdirSync(root)
    writeFileSync(join(root, 'f.txt'), 'base\nEND\n')
    const local = new LocalFileSystem({ cwd: root })
    const version = (await local.stat(await local.resolve('f.txt')))!.version

    const a = start(HOLDER, [root])
    await a.said('A-in')
    a.proc.kill('SIGSTOP')
    // The holder is alive (stopped), so only its lease (300 ms) lets the taker in.
    const b = start(TAKER, [root, version])
    await b.said('B-in')
    a.proc.kill('SIGCONT')
    writeFileSync(join(base, 'go-A'), '')
    const aResult = (await a.said('A-result')).split(' ')[1]
    writeFileSync(join(base, 'go-B'), '')
    const bResult = (await b.said('B-result')).split(' ')[1]

    const survives = existsSync(join(root, 'f.txt')) && readFileSync(join(root, 'f.txt'), 'utf8').includes('A-EDIT')
    expect(
      { aResult, bResult, aEditSurvives: survives },
      'the frozen holder reported its edit successful, then the writer who had taken its lock removed it',
    ).not.toEqual({ aResult: 'ok', bResult: 'ok', aEditSurvives: false })
    expect(aResult, 'a holder whose lock was taken over must fail its commit (retryable FS_IO_ERROR)').toBe('FS_IO_ERROR')
  })
})
