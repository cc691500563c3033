/**
 * The hard stop of a tool deadline: a body that ignores its signal is left behind a second after the
 * deadline and the call returns a timeout; calls of the same bucket that ended in time keep their own
 * answers; a late answer of a stopped call changes nothing; and a bucket that emptied takes calls
 * again (their places reused) and still stops each one that hangs. Bounded: a few seconds.
 */
import { describe, expect, it } from 'vitest'
import { withDeadline } from '../src/deadline.js'
import type { FileTool, ToolResult } from '../src/types.js'

const DEADLINE_MS = 100
/** The deadline, the hard stop's second, a bucket's 50 ms and a loaded machine's slack. */
const BOUND_MS = DEADLINE_MS + 1000 + 1500

/** A tool whose calls wait for `release(n)` (the n-th call's answer), ignoring their signal. */
function stubborn(): { tool: FileTool<string>; release: (n: number, text: string) => void; signals: AbortSignal[] } {
  const waiting: ((result: ToolResult<string>) => void)[] = []
  const signals: AbortSignal[] = []
  const tool: FileTool<string> = {
    name: 'stubborn',
    description: 'waits',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { title: 'Stubborn', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: '',
    execute: (_args, context = {}) => {
      if (context.signal !== undefined) signals.push(context.signal)
      return new Promise((resolve) => waiting.push(resolve))
    },
  }
  return { tool, signals, release: (n, text) => waiting[n]?.({ text, isError: false, value: text }) }
}

async function timed(call: Promise<ToolResult<string>>): Promise<{ result: ToolResult<string>; ms: number }> {
  const started = performance.now()
  const result = await call
  return { result, ms: performance.now() - started }
}

describe('a tool deadline’s hard stop', () => {
  it('returns a timeout for each call that hangs past it, keeps the answers of those that ended, and ignores late answers', async () => {
    const { tool, release, signals } = stubborn()
    const bounded = withDeadline(tool, DEADLINE_MS)
    const calls = Array.from({ length: 4 }, () => timed(bounded.execute({})))
    // Two end before the deadline, the others never answer until after the hard stop.
    release(1, 'one')
    release(3, 'three')
    const ended = await Promise.all(calls)
    expect(ended.map(({ result }) => result.text)).toEqual([expect.stringContaining('timed out'), 'one', expect.stringContaining('timed out'), 'three'])
    for (const i of [0, 2]) {
      const { result, ms } = ended[i] as { result: ToolResult<string>; ms: number }
      expect([result.code, result.retryable, result.indeterminate]).toEqual(['FS_IO_ERROR', true, undefined])
      expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS + 1000 - 1)
      expect(ms).toBeLessThan(BOUND_MS)
    }
    expect(signals.every((s) => s.aborted)).toBe(true)
    // The stopped calls' bodies answer at last: nothing changes, nothing throws.
    release(0, 'late')
    release(2, 'late')
    await new Promise((resolve) => setImmediate(resolve))
  }, 10_000)

  it('a bucket that emptied takes new calls, and stops a hanging one among them', async () => {
    const { tool, release } = stubborn()
    const bounded = withDeadline(tool, DEADLINE_MS)
    // Calls one after another within one bucket: each ends, the bucket empties and is used again.
    for (let n = 0; n < 3; n++) {
      const call = bounded.execute({})
      release(n, `quick ${n}`)
      expect((await call).text).toBe(`quick ${n}`)
    }
    const hanging = timed(bounded.execute({}))
    const quick = bounded.execute({})
    release(4, 'quick 4')
    expect((await quick).text).toBe('quick 4')
    const { result, ms } = await hanging
    expect(result.code).toBe('FS_IO_ERROR')
    expect(ms).toBeLessThan(BOUND_MS)
  }, 10_000)
})
