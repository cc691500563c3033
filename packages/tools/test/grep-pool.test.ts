/**
 * One process-wide pool of regex threads: concurrent greps share at most
 * `max(2, cores)` threads and get the one-at-a-time answers; a catastrophic pattern is stopped
 * (its thread terminated, replaced when needed) without losing other searches' chunks; idle
 * threads end and never keep the process alive. No speed assertions: counts and answers only.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, type ToolResult, type ToolsConfig } from '@seamfs/tools'
import { ABANDONED, RegexPool, RegexWorker, regexPoolStats, type WorkerReply } from '../src/grep-worker.js'
import { SearchControl } from '../src/walk.js'

const FILES = 64
const LINES = 100
const CATASTROPHIC = '(a+)+$'
const EVIL = `${'a'.repeat(40)}!`

/** 64 files of 100 lines: `f<i> line <n> <word>`, words from a small set so patterns hit many files. */
function tree(): Record<string, string> {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
  const files: Record<string, string> = {}
  for (let f = 0; f < FILES; f++) {
    const lines: string[] = []
    for (let n = 1; n <= LINES; n++) lines.push(`f${f} line ${n} ${words[(f * 7 + n) % words.length]}${n % 10 === 0 ? '\r' : ''}`)
    files[`dir${f % 4}/file${String(f).padStart(2, '0')}.txt`] = `${lines.join('\n')}\n`
  }
  return files
}

/** 64 patterns: some match in every file, some in a few, some nowhere. */
const PATTERNS = Array.from({ length: 64 }, (_, i) =>
  i % 4 === 0 ? `line ${i + 1} ` : i % 4 === 1 ? `^f${i} ` : i % 4 === 2 ? ['alpha$', 'beta$', 'gamma$', 'delta$', 'nowhere'][i % 5] : `${i}\\d (gamma|beta)`,
)

function tools(config: Partial<ToolsConfig> = {}) {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { ...tree(), 'evil.txt': `${EVIL}\n` } })
  return createFileToolsByName({ fs, config })
}

/** The process's OS threads (Linux; undefined elsewhere). */
function osThreads(): number | undefined {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1])
  } catch {
    return undefined
  }
}

/** Samples the OS thread count and the shared pool's threads until stopped. */
function sampler() {
  let os = osThreads()
  let pool = regexPoolStats().threads
  const sample = (): void => {
    const now = osThreads()
    if (now !== undefined && (os === undefined || now > os)) os = now
    pool = Math.max(pool, regexPoolStats().threads)
  }
  const timer = setInterval(sample, 1)
  return {
    sample,
    stop: () => {
      clearInterval(timer)
      sample()
      return { os, pool }
    },
  }
}

/** Waits (bounded) until `done()` holds. */
async function eventually(done: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const answer = (r: ToolResult): unknown => ({ isError: r.isError === true, text: r.text, value: r.value })

describe('the shared regex pool', () => {
  it('64 concurrent greps give the one-at-a-time answers, on at most max(2, cores) threads', { timeout: 60_000 }, async () => {
    const t = tools({ searchTimeoutMs: 50_000 })
    const expected: unknown[] = []
    for (const pattern of PATTERNS) expected.push(answer(await t.grep.execute({ pattern })))
    expect(expected.filter((a) => (a as { isError: boolean }).isError)).toEqual([])
    expect(new Set(expected.map((a) => (a as { text: string }).text)).size).toBeGreaterThan(30)

    const before = regexPoolStats()
    const osBefore = osThreads()
    // The OS threads that are not the pool's: the pool's own may grow to its bound, nothing else may grow.
    const others = osBefore === undefined ? undefined : osBefore - before.threads
    const s = sampler()
    const got = await Promise.all(
      PATTERNS.map(async (pattern) => {
        const r = await t.grep.execute({ pattern })
        s.sample()
        return answer(r)
      }),
    )
    const peak = s.stop()
    expect(got).toEqual(expected)
    const stats = regexPoolStats()
    expect(stats.maxThreads).toBe(Math.max(2, (await import('node:os')).availableParallelism()))
    expect(peak.pool).toBeLessThanOrEqual(stats.maxThreads)
    expect(stats.peakThreads).toBeLessThanOrEqual(stats.maxThreads)
    expect(stats.queued).toBe(0)
    expect(stats.busy).toBe(0)
    // A real figure too: the process never ran more than the pool's bound (plus two for libuv/V8 slack) beyond its other threads.
    if (others !== undefined && peak.os !== undefined) expect(peak.os - others).toBeLessThanOrEqual(stats.maxThreads + 2)
  })

  it('stops a catastrophic pattern at the budget; the pool stays bounded and the next grep works', { timeout: 30_000 }, async () => {
    const t = tools({ searchTimeoutMs: 300 })
    const killed = regexPoolStats().killed
    const r = await t.grep.execute({ pattern: CATASTROPHIC, include: 'evil.txt' })
    expect(r.isError).toBe(true)
    expect(r.text).toContain('grep stopped after 300 ms')
    expect(regexPoolStats().killed).toBe(killed + 1)
    const ok = await tools().grep.execute({ pattern: 'a!$' })
    expect(ok.value?.totalMatches).toBe(1)
    // The stuck thread has gone: nothing busy, nothing past the bound.
    await eventually(() => regexPoolStats().busy === 0)
    const stats = regexPoolStats()
    expect(stats.threads).toBeLessThanOrEqual(stats.maxThreads)
    expect(stats.peakThreads).toBeLessThanOrEqual(stats.maxThreads)
  })

  it('catastrophic greps on every thread hold up the others only until their budget: no answer is lost', { timeout: 60_000 }, async () => {
    const fast = tools({ searchTimeoutMs: 50_000 })
    const slow = tools({ searchTimeoutMs: 500 })
    const normal = PATTERNS.slice(0, 16)
    const expected: unknown[] = []
    for (const pattern of normal) expected.push(answer(await fast.grep.execute({ pattern })))
    const max = regexPoolStats().maxThreads
    const s = sampler()
    const [evil, got] = await Promise.all([
      Promise.all(Array.from({ length: 2 * max }, () => slow.grep.execute({ pattern: CATASTROPHIC, include: 'evil.txt' }))),
      Promise.all(normal.map(async (pattern) => answer(await fast.grep.execute({ pattern })))),
    ])
    const peak = s.stop()
    expect(evil.every((r) => r.isError === true && r.text.includes('grep stopped after 500 ms'))).toBe(true)
    expect(got).toEqual(expected)
    expect(peak.pool).toBeLessThanOrEqual(max)
    await eventually(() => regexPoolStats().busy === 0)
  })
})

/** A search's budget; `race` as the tools use it. */
const control = (ms = 20_000): SearchControl => new SearchControl('grep', ms, undefined)

/** The reference: `text` as one file, split into lines the grep way. */
function reference(text: string, re: RegExp): { lines: number[]; count: number } {
  const parts = text.split('\n')
  if (parts[parts.length - 1] === '') parts.pop()
  const lines: number[] = []
  parts.forEach((line, i) => {
    if (re.test(line.endsWith('\r') ? line.slice(0, -1) : line)) lines.push(i + 1)
  })
  return { lines, count: lines.length }
}

/** `text` streamed through `worker` in chunks of `size` units, then a final empty chunk. */
async function streamed(worker: RegexWorker, text: string, size: number): Promise<{ lines: number[]; count: number }> {
  const lines: number[] = []
  let count = 0
  const take = (reply: WorkerReply): void => {
    lines.push(...reply.matches.map((m) => m.line))
    count += reply.count
  }
  for (let at = 0; at < text.length; at += size) take(await worker.match(text.slice(at, at + size), at === 0, false, 1000))
  take(await worker.match('', text.length === 0, true, 1000))
  return { lines, count }
}

describe('RegexWorker on a pool', () => {
  it('serves chunks of different searches interleaved on one thread, each with its own lines', { timeout: 30_000 }, async () => {
    const pool = new RegexPool({ maxThreads: 1 })
    const c = control()
    try {
      const text = Array.from({ length: 300 }, (_, i) => `${i % 7 === 0 ? 'needle' : 'hay'} ${i}${i % 5 === 0 ? '\r' : ''}`).join('\n')
      const a = new RegexWorker({ source: 'needle \\d+$', flags: 'u', maxUnits: 100, control: c, pool })
      const b = new RegexWorker({ source: '^hay 1', flags: 'u', maxUnits: 100, control: c, pool })
      const [ra, rb, rc] = await Promise.all([
        streamed(a, text, 37),
        streamed(b, `${text}\n`, 101),
        streamed(new RegexWorker({ source: '^$', flags: '', maxUnits: 100, control: c, pool }), '\n\n\nx', 2),
      ])
      expect(ra).toEqual(reference(text, /needle \d+$/u))
      expect(rb).toEqual(reference(`${text}\n`, /^hay 1/u))
      expect(rc).toEqual(reference('\n\n\nx', /^$/))
      expect(pool.stats().peakThreads).toBe(1)
    } finally {
      c.dispose()
      pool.close()
    }
  })

  it("disposing a search mid-chunk ends its thread; another search's queued chunk is still answered", { timeout: 30_000 }, async () => {
    const pool = new RegexPool({ maxThreads: 1 })
    const c = control()
    try {
      const evil = new RegexWorker({ source: CATASTROPHIC, flags: 'u', maxUnits: 100, control: c, pool })
      const good = new RegexWorker({ source: 'b$', flags: 'u', maxUnits: 100, control: c, pool })
      const stuck = evil.match(`${EVIL}\n`, true, true, 10)
      const queued = good.match('ab\nc\nb\n', true, true, 10)
      await eventually(() => pool.stats().busy === 1 && pool.stats().queued === 1)
      evil.dispose()
      await expect(stuck).rejects.toThrow(ABANDONED)
      expect(await queued).toEqual({
        matches: [
          { line: 1, text: 'ab', cut: false },
          { line: 3, text: 'b', cut: false },
        ],
        count: 2,
      })
      const stats = pool.stats()
      expect(stats.killed).toBe(1)
      expect(stats.started).toBe(2)
      expect(stats.peakThreads).toBe(1)
      await expect(evil.match('x', true, true, 1)).rejects.toThrow(ABANDONED)
    } finally {
      c.dispose()
      pool.close()
    }
  })

  it("the search's budget ending stops its chunk's thread, even before dispose", { timeout: 30_000 }, async () => {
    const pool = new RegexPool({ maxThreads: 2 })
    const c = control(200)
    try {
      const evil = new RegexWorker({ source: CATASTROPHIC, flags: '', maxUnits: 100, control: c, pool })
      await expect(evil.match(EVIL, true, true, 1)).rejects.toThrow('grep stopped after 200 ms')
      await eventually(() => pool.stats().threads === 0)
      expect(pool.stats().killed).toBe(1)
    } finally {
      c.dispose()
      pool.close()
    }
  })

  it('holds one chunk in flight per search', { timeout: 30_000 }, async () => {
    const pool = new RegexPool({ maxThreads: 1 })
    const c = control()
    try {
      const w = new RegexWorker({ source: 'x', flags: 'u', maxUnits: 100, control: c, pool })
      const first = w.match('x\n', true, true, 1)
      await expect(w.match('x\n', true, true, 1)).rejects.toThrow('one chunk at a time')
      expect((await first).count).toBe(1)
      expect((await w.match('y\nx\n', true, true, 1)).matches).toEqual([{ line: 2, text: 'x', cut: false }])
    } finally {
      c.dispose()
      pool.close()
    }
  })

  it('ends idle threads after idleMs', { timeout: 30_000 }, async () => {
    const pool = new RegexPool({ maxThreads: 4, idleMs: 50 })
    const c = control()
    try {
      const workers = Array.from({ length: 4 }, () => new RegexWorker({ source: 'a', flags: 'u', maxUnits: 100, control: c, pool }))
      await Promise.all(workers.map((w) => w.match('a\n'.repeat(10_000), true, true, 1)))
      expect(pool.stats().started).toBeGreaterThanOrEqual(1)
      await eventually(() => pool.stats().threads === 0)
      expect(pool.stats().killed).toBe(0)
    } finally {
      c.dispose()
      pool.close()
    }
  })

  it('an idle shared pool does not keep the process alive (built packages, as npm test builds first)', { timeout: 30_000 }, async () => {
    const tools = fileURLToPath(new URL('../dist/index.js', import.meta.url))
    const memory = fileURLToPath(new URL('../../backend-memory/dist/index.js', import.meta.url))
    // Exit 0: the process ended on its own after the grep. Exit 7: something (a thread, the idle timer) still held it 5 s later.
    const script = `
const [tools, memory] = process.argv.slice(1)
const { createFileToolsByName } = await import(tools)
const { MemoryFileSystem } = await import(memory)
const t = createFileToolsByName({ fs: new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'x\\ny\\n' } }) })
const r = await t.grep.execute({ pattern: 'y' })
process.stdout.write(String(r.value.totalMatches) + '\\n')
setTimeout(() => process.exit(7), 5000).unref()
`
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, tools, memory], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      const timer = setTimeout(() => child.kill('SIGKILL'), 25_000)
      child.on('error', reject)
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, out })
      })
    })
    expect(out.trim()).toBe('1')
    expect(code).toBe(0)
  })
})
