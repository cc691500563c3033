/**
 * The deadlines share one timer per 50 ms bucket: that timer must hold the process open while a
 * call waits on it (a call whose store never answers still ends at its deadline, even when nothing
 * else keeps the process alive) and never after the calls in it ended (a one-shot program exits at
 * once, not when the default 30 s deadline would have fallen due). Each case is a child process
 * running the built packages, bounded in time.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const BUILT = ['packages/tools/dist/index.js', 'packages/backend-memory/dist/index.js'].every((rel) => existsSync(`${REPO}${rel}`))
const BOUND_MS = 15_000

/** Runs `source` as an ES module in a child at the repo root; its stdout, exit code and wall time. */
function runModule(source: string): Promise<{ stdout: string; code: number | null; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the child did not exit within ${BOUND_MS} ms; stdout: ${stdout}`))
    }, BOUND_MS)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ stdout, code, ms: performance.now() - started })
    })
  })
}

describe.skipIf(!BUILT)(`the shared deadline timers, in a process of their own${BUILT ? '' : ' — SKIPPED: dist build missing; run `npx tsc -b`'}`, () => {
  it('a one-shot call with the default 30 s deadline lets the process exit at once', async () => {
    const { stdout, code, ms } = await runModule(`
      import { MemoryFileSystem } from '@seamfs/backend-memory'
      import { createFileToolsByName } from '@seamfs/tools'
      const tools = createFileToolsByName({ fs: new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\\n' } }), cwd: '/w' })
      const r = await tools.read.execute({ file_path: 'a.txt' })
      console.log(r.isError ? 'error' : 'ok')
    `)
    expect([stdout.trim(), code]).toEqual(['ok', 0])
    expect(ms).toBeLessThan(10_000)
  })

  it('a call whose store never answers ends at its deadline, though nothing else holds the process open', async () => {
    const { stdout, code } = await runModule(`
      import { MemoryFileSystem } from '@seamfs/backend-memory'
      import { createFileToolsByName } from '@seamfs/tools'
      class Hung extends MemoryFileSystem {
        openTarget() { return new Promise(() => {}) }
      }
      const fs = new Hung({ cwd: '/w', files: { 'a.txt': 'a\\n' } })
      const tools = createFileToolsByName({ fs, cwd: '/w', config: { callTimeoutMs: 300 } })
      const r = await tools.read.execute({ file_path: 'a.txt' })
      console.log(JSON.stringify({ code: r.code, retryable: r.retryable }))
    `)
    // Without a timer holding the process open, it would exit with the call unsettled (code 13, nothing printed).
    expect([JSON.parse(stdout.trim()) as unknown, code]).toEqual([{ code: 'FS_IO_ERROR', retryable: true }, 0])
  })

  it('actors are carried only once something reads them: no promise hooks until then, and then every change names its session', async () => {
    const { stdout, code } = await runModule(`
      import { executionAsyncId } from 'node:async_hooks'
      import { MemoryFileSystem } from '@seamfs/backend-memory'
      import { EventedFileSystem } from '@seamfs/core'
      import { createFileToolsByName } from '@seamfs/tools'
      // Promise hooks on (the cost of AsyncLocalStorage on Node 20): each await runs as a resource of its own.
      const hooked = async () => { await null; const a = executionAsyncId(); await null; return a !== executionAsyncId() }
      const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\\n' } })
      const plain = createFileToolsByName({ fs, cwd: '/w' })
      await plain.read.execute({ file_path: 'a.txt' })
      await plain.write.execute({ file_path: 'a.txt', content: 'b\\n' })
      const before = await hooked()
      const evented = new EventedFileSystem(fs)
      const actors = []
      evented.on((event) => actors.push(typeof event.actor))
      const tools = createFileToolsByName({ fs: evented, cwd: '/w' })
      await tools.write.execute({ file_path: 'new.txt', content: 'n\\n' })
      console.log(JSON.stringify({ before, actors, after: await hooked() }))
    `)
    expect([JSON.parse(stdout.trim()) as unknown, code]).toEqual([{ before: false, actors: ['object'], after: true }, 0])
  })
})
