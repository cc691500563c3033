/**
 * Attacks on `fileToolSet`: what a hostile or broken model sends as tool input, an
 * abort while a tool runs, and a backend that throws things that are not `Error`s. A tool call
 * never crashes the run: it resolves to a `ToolResult` or rejects with a `FileToolError` whose
 * message is the tool's text.
 */
import { generateText, stepCountIs, type ToolExecutionOptions } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import type { FileSystem } from '@seamfs/core'
import { fileToolSet, isFileToolError, type FileAiTool } from '@seamfs/ai-sdk'

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

const options = (signal?: AbortSignal): ToolExecutionOptions => ({ toolCallId: 'c1', messages: [], ...(signal === undefined ? {} : { abortSignal: signal }) })

async function run(t: FileAiTool, input: unknown, signal?: AbortSignal): Promise<unknown> {
  const execute = t.execute as (input: unknown, o: ToolExecutionOptions) => Promise<unknown>
  return execute(input, options(signal)).catch((err: unknown) => err)
}

/** `fs` with `method` replaced. */
function withMethod(fs: FileSystem, method: string, impl: (...args: never[]) => unknown): FileSystem {
  return new Proxy(fs, {
    get(target, key, receiver) {
      if (key === method) return impl
      const v = Reflect.get(target, key, receiver) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
}

describe('fileToolSet against hostile input', () => {
  it('input that is not an object is refused as a FileToolError with the tool text, for every tool', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\n' } })
    const tools = fileToolSet({ fs }) as Record<string, FileAiTool>
    for (const [name, t] of Object.entries(tools)) {
      for (const input of [null, undefined, [], ['a.txt'], 'a.txt', 42, true, { __proto__: { file_path: 'a.txt' } }, Object.create(null)]) {
        const got = await run(t, input)
        const label = `${name}(${JSON.stringify(input) ?? String(input)})`
        // No input at all is an empty object for a tool without required arguments (list lists the cwd).
        if (['list', 'tree', 'list_roots'].includes(name) && (input === undefined || (typeof input === 'object' && input !== null && !Array.isArray(input))))
          continue
        expect.soft(isFileToolError(got), label).toBe(true)
        if (isFileToolError(got)) expect.soft(got.message, label).toMatch(/^Error: /)
      }
    }
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a\n' })
  })

  it('prototype-polluting and oversized arguments change nothing outside the file they name', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: {} })
    const tools = fileToolSet({ fs, policy: false })
    const polluted = JSON.parse('{"file_path":"p.txt","content":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as object
    const got = await run(tools.write, polluted)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
    if (!isFileToolError(got)) expect(fs.toJSON()).toEqual({ 'p.txt': 'x' })
    const long = await run(tools.read, { file_path: 'x'.repeat(1_000_000) })
    expect(isFileToolError(long)).toBe(true)
    expect((long as Error).message.length).toBeLessThan(10_000)
  })

  it('the model sends null, an array or broken JSON as input: the run goes on and the model reads an error', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\n' } })
    const inputs = ['null', '[1,2]', '"a.txt"', '{"file_path": ', '{"file_path":"a.txt","extra":1}']
    let step = 0
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const input = inputs[step++]
        if (input === undefined)
          return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
        return {
          content: [{ type: 'tool-call', toolCallId: `c${step}`, toolName: 'read', input }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: USAGE,
          warnings: [],
        }
      },
    })
    const result = await generateText({ model, tools: fileToolSet({ fs }), prompt: 'go', stopWhen: stepCountIs(8) })
    expect(result.text).toBe('done')
    const errors = result.steps.flatMap((s) => s.content.filter((p) => p.type === 'tool-error'))
    expect(errors).toHaveLength(inputs.length)
  })
})

describe('fileToolSet: aborts and throws from the backend', () => {
  it('an abort after the tool started ends the call promptly with FS_ABORTED and writes nothing', async () => {
    const base = new MemoryFileSystem({ cwd: '/w', files: {} })
    let entered = false
    const slow = withMethod(base, 'writeText', (_t: unknown, _text: unknown, o?: { signal?: AbortSignal }) => {
      entered = true
      return new Promise((_resolve, reject) => {
        const signal = o?.signal
        if (signal === undefined) return
        // What an AbortSignal-aware Node API (fs.promises, fetch, streams) rejects with.
        signal.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')), { once: true })
      })
    })
    // Its public methods replaced: no fence in between (a fence calls the backend's hooks).
    const tools = fileToolSet({ fs: slow, policy: false, sandbox: false })
    const controller = new AbortController()
    const pending = run(tools.write, { file_path: 'n.txt', content: 'x' }, controller.signal)
    await new Promise((r) => setTimeout(r, 30))
    controller.abort(new Error('user pressed stop'))
    const got = await pending
    expect(entered).toBe(true)
    expect(isFileToolError(got)).toBe(true)
    expect((got as { code?: string }).code).toBe('FS_ABORTED')
    expect(base.toJSON()).toEqual({})
  })

  it('a signal already aborted refuses the call before any I/O', async () => {
    let touched = 0
    const base = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\n' } })
    const counting = new Proxy(base, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown
        if (typeof v !== 'function') return v
        return (...args: unknown[]) => {
          if (['readText', 'writeText', 'stat', 'editText', 'writeBytes', 'readBytes', 'listDir'].includes(String(key))) touched++
          return (v as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
    const tools = fileToolSet({ fs: counting, policy: false, sandbox: false })
    const got = await run(tools.write, { file_path: 'a.txt', content: 'b' }, AbortSignal.abort())
    expect(isFileToolError(got)).toBe(true)
    expect(touched).toBe(0)
    expect(base.toJSON()).toEqual({ 'a.txt': 'a\n' })
  })

  it('a backend that throws a string, undefined, a frozen object or an object whose toString throws is an internal error, never a crash', async () => {
    const weird: unknown[] = [
      'plain string',
      undefined,
      null,
      42,
      Object.freeze({ code: 'FS_NOT_FOUND' }),
      {
        toString() {
          throw new Error('nested')
        },
      },
      Object.create(null) as object,
      Symbol('s'),
    ]
    for (const thrown of weird) {
      const fs = withMethod(new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\n' } }), 'readText', () => Promise.reject(thrown)) // eslint-disable-line @typescript-eslint/prefer-promise-reject-errors
      const fs2 = withMethod(fs, 'readTextStream', () => {
        throw thrown
      })
      // The read tool opens the file (openFile): it throws there too.
      const fs3 = withMethod(fs2, 'openFile', () => Promise.reject(thrown)) // eslint-disable-line @typescript-eslint/prefer-promise-reject-errors
      const tools = fileToolSet({ fs: fs3, sandbox: false })
      const got = await run(tools.read, { file_path: 'a.txt' })
      const label = `thrown #${weird.indexOf(thrown)}`
      expect.soft(isFileToolError(got), `${label}: ${String(got)}`).toBe(true)
    }
  })
})

describe('fileToolSet: fenced by default, as createFileTools is', () => {
  it('no ../x and no absolute path outside the cwd; `sandbox: false` widens it, explicitly', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { '/secret.txt': 'SECRET\n', '/w/a.txt': 'a\n' } })
    const tools = fileToolSet({ fs, policy: false })
    for (const [t, input] of [
      [tools.read, { file_path: '../secret.txt' }],
      [tools.read, { file_path: '/secret.txt' }],
      [tools.write, { file_path: '/x.txt', content: 'x\n' }],
      [tools.write, { file_path: '.git/hooks/pre-commit', content: 'x\n' }],
    ] as const) {
      const got = await run(t, input)
      expect(isFileToolError(got), JSON.stringify(input)).toBe(true)
      expect((got as { code?: string }).code).toBe('FS_SANDBOX_DENIED')
    }
    // Nothing written, inside (the hook) or out.
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a\n' })
    expect(await fs.stat(await fs.resolve('/x.txt'))).toBeUndefined()
    const wide = fileToolSet({ fs, policy: false, sandbox: false })
    expect(JSON.stringify(await run(wide.read, { file_path: '../secret.txt' }))).toContain('SECRET')
  })
})
