/**
 * Every tool call has a deadline: on a store that stops answering, a call with no
 * signal of its own ends at `callTimeoutMs` with a retryable `FS_IO_ERROR` that blames the store;
 * a mutation is flagged `indeterminate` (it may still land) and told to read before retrying; a
 * search blames the store, not the pattern; the caller's own abort stays `FS_ABORTED`; and once
 * the store answers again the same tools work. The store here is memory whose hooks wait while
 * frozen (the remote backends' own freeze tests use real servers).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { ObservationPolicy } from '@seamfs/core'
import { createFileToolsByName, DEFAULT_CONFIG, type ToolResult } from '../src/index.js'
import { frozenStores } from '../../backend-memory/test/frozen-store.js'

const DEADLINE_MS = 300
/** Far above the deadline on a loaded machine, far below the hang it replaces. */
const BOUND_MS = 3000

const stores = frozenStores()
afterEach(stores.cleanup)

function setup(): { fs: ReturnType<typeof stores.make>; tools: ReturnType<typeof createFileToolsByName> } {
  const fs = stores.make({ files: { 'a.txt': 'alpha\nbeta\n', 'src/b.ts': 'const beta = 1\n' }, cwd: '/w' })
  const tools = createFileToolsByName({ fs, policy: new ObservationPolicy(), cwd: '/w', config: { callTimeoutMs: DEADLINE_MS } })
  return { fs, tools }
}

async function timed<V>(call: Promise<ToolResult<V>>): Promise<{ result: ToolResult<V>; ms: number }> {
  const started = performance.now()
  const result = await call
  return { result, ms: performance.now() - started }
}

describe('the tools deadline', () => {
  it('is 30 s by default, and must be a positive integer', () => {
    expect(DEFAULT_CONFIG.callTimeoutMs).toBe(30_000)
    const fs = new MemoryFileSystem()
    expect(() => createFileToolsByName({ fs, config: { callTimeoutMs: 0 } })).toThrow(/callTimeoutMs must be a positive integer/)
  })

  it('ends reads and searches on a frozen store with a retryable FS_IO_ERROR that blames the store', async () => {
    const { fs, tools } = setup()
    fs.freeze()
    const calls: Array<[string, Promise<ToolResult>]> = [
      ['read', tools.read.execute({ file_path: 'a.txt' })],
      ['list', tools.list.execute({ path: '.' })],
      ['glob', tools.glob.execute({ pattern: '**/*.ts' })],
      ['grep', tools.grep.execute({ pattern: 'beta' })],
    ]
    for (const [name, call] of calls) {
      const { result, ms } = await timed(call)
      expect(result.isError, name).toBe(true)
      expect(result.code, `${name}: ${result.text}`).toBe('FS_IO_ERROR')
      expect(result.retryable, name).toBe(true)
      expect(result.indeterminate, name).toBeUndefined()
      expect(result.text, name).toMatch(/store did not answer/)
      expect(result.text, name).not.toMatch(/pattern/)
      expect(ms, name).toBeLessThan(BOUND_MS)
    }
  })

  it('flags a mutation that timed out as indeterminate, and tells the model to read before retrying', async () => {
    const { fs, tools } = setup()
    expect((await tools.read.execute({ file_path: 'a.txt' })).isError).toBe(false)
    fs.freeze()
    const { result, ms } = await timed(tools.edit.execute({ file_path: 'a.txt', old_string: 'alpha', new_string: 'gamma' }))
    expect(result).toMatchObject({ isError: true, code: 'FS_IO_ERROR', retryable: true, indeterminate: true })
    expect(result.text).toMatch(/timed out after 300 ms/)
    expect(result.text).toMatch(/may or may not have been made: read the file/)
    expect(ms).toBeLessThan(BOUND_MS)
    // The edit was only delayed: once the store answers, it lands (which is why it was not reported as failed).
    fs.thaw()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await fs.readText(await fs.resolve('/w/a.txt'))).toBe('gamma\nbeta\n')
  })

  it("keeps the caller's own abort FS_ABORTED, and the same tools work once the store answers", async () => {
    const { fs, tools } = setup()
    fs.freeze()
    const { result } = await timed(tools.read.execute({ file_path: 'a.txt' }, { signal: AbortSignal.timeout(50) }))
    expect(result).toMatchObject({ isError: true, code: 'FS_ABORTED' })
    expect(result.retryable).toBeUndefined()
    fs.thaw()
    const read = await tools.read.execute({ file_path: 'a.txt' })
    expect(read.isError, read.text).toBe(false)
    expect(read.text).toContain('1: alpha')
    const write = await tools.write.execute({ file_path: 'c.txt', content: 'new\n' })
    expect(write.isError, write.text).toBe(false)
  })

  it('leaves a call that ends in time untouched', async () => {
    const fs = stores.make({ files: { 'a.txt': 'alpha\nbeta\n' }, cwd: '/w' })
    // Room for a first regex thread to start on a loaded machine: only the call's ending in time is under test.
    const ms = 5000
    const tools = createFileToolsByName({ fs, cwd: '/w', config: { callTimeoutMs: ms } })
    const result = await tools.grep.execute({ pattern: 'beta' })
    expect(result.isError, result.text).toBe(false)
    expect((await tools.read.execute({ file_path: 'a.txt' })).isError).toBe(false)
  })

  it('many calls due together share one deadline signal: each ends at it, none warns of too many listeners, and two deadlines never mix', async () => {
    const warnings: string[] = []
    const onWarning = (w: Error): void => void warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const { fs, tools } = setup()
      // Past the bound the first calls must end within, however loaded the machine.
      const otherMs = BOUND_MS + DEADLINE_MS
      const other = createFileToolsByName({ fs, cwd: '/w', config: { callTimeoutMs: otherMs } })
      fs.freeze()
      const started = performance.now()
      const calls = Array.from({ length: 40 }, () => timed(tools.read.execute({ file_path: 'a.txt' })))
      const slower = timed(other.read.execute({ file_path: 'a.txt' }))
      const ended = await Promise.all(calls)
      for (const { result, ms } of ended) {
        expect([result.code, result.retryable]).toEqual(['FS_IO_ERROR', true])
        expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 1)
        expect(ms).toBeLessThan(BOUND_MS)
      }
      // The other tool set's calls fall due at their own deadline, not at the first one's.
      expect(performance.now() - started).toBeLessThan(BOUND_MS)
      const late = await slower
      expect(late.result.code).toBe('FS_IO_ERROR')
      expect(late.ms).toBeGreaterThanOrEqual(otherMs - 1)
      fs.thaw()
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).not.toContain('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
    }
  })
})
