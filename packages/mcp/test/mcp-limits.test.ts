/**
 * MCP limits that fail cleanly. In process: the request-id scanner, the result
 * cap, and the stdio transport over PassThrough streams. End to end: a REAL
 * child process (test/fixtures/mcp-limits-server.js over the BUILT packages,
 * default limits) gets 10, 50 and 200 MiB messages streamed in 1 MiB chunks
 * with backpressure, and must answer each, stay alive, and answer the next call.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools } from '@seamfs/tools'
import { createMcpServer, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RESULT_BYTES, serveStdio, truncateResultText } from '@seamfs/mcp'
import { RequestIdScanner } from '../src/request-id-scanner.js'

const MiB = 1024 * 1024
const FOOTER = /\n\[output truncated at (\d+) bytes of (\d+); narrow the request: use offset\/limit, a narrower path or pattern\]$/

interface Reply {
  readonly id?: string | number | null
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

describe('RequestIdScanner: the top-level id and method of a streamed message', () => {
  const rows: Array<[string, string, string | number | undefined, boolean]> = [
    ['id first', '{"jsonrpc":"2.0","id":7,"method":"ping"}', 7, true],
    ['id last, as the SDK client sends it', '{"method":"tools/call","params":{"id":1,"x":{"id":2}},"jsonrpc":"2.0","id":42}', 42, true],
    ['a string id with escapes, commas and braces', '{"method":"m","id":"a\\"b,}c"}', 'a"b,}c', true],
    ['spaces around the colon', '{ "method" : "m" , "id" : -3 }', -3, true],
    ['a nested id only', '{"method":"m","params":{"id":5}}', undefined, true],
    ['a key ending in id (foo\\"id)', '{"method":"m","foo\\"id":5}', undefined, true],
    ['a value that looks like a key', '{"method":"m","params":"\\"id\\":9"}', undefined, true],
    ['a fractional id', '{"method":"m","id":1.5}', undefined, true],
    ['a null id', '{"method":"m","id":null}', undefined, true],
    ['a response', '{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}', 3, false],
    ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"m"}]', undefined, false],
  ]

  it.each(rows)('%s', (_label, json, id, hasMethod) => {
    for (const step of [json.length, 1, 3]) {
      const scanner = new RequestIdScanner()
      const bytes = Buffer.from(json)
      for (let i = 0; i < bytes.length; i += step) scanner.write(bytes.subarray(i, i + step))
      expect([scanner.id, scanner.hasMethod]).toEqual([id, hasMethod])
    }
  })
})

describe('truncateResultText', () => {
  it('leaves a text within the cap as is', () => {
    const text = '€'.repeat(1000)
    expect(truncateResultText(text, 3000)).toBe(text)
    expect(truncateResultText('a\n'.repeat(100))).toBe('a\n'.repeat(100))
  })

  it('cuts on a character boundary and ends with a footer naming both sizes', () => {
    for (const unit of ['é', '€', '🐂', 'a€🐂']) {
      const text = unit.repeat(5000)
      const out = truncateResultText(text, 4096)
      expect(Buffer.byteLength(out)).toBeLessThanOrEqual(4096)
      const [, kept, total] = FOOTER.exec(out) ?? []
      expect(Number(total)).toBe(Buffer.byteLength(text))
      const body = out.slice(0, out.length - (FOOTER.exec(out)?.[0].length ?? 0))
      expect(Buffer.byteLength(body)).toBe(Number(kept))
      expect(text.startsWith(body)).toBe(true)
      expect(body).not.toMatch(/[\uD800-\uDBFF]$/)
      expect(Number(kept)).toBeGreaterThan(4096 - 200)
    }
  })

  it('cuts at a line end when one is in the second half', () => {
    const text = Array.from({ length: 200 }, (_, i) => `${i + 1}: ${'x'.repeat(50)}`).join('\n')
    const out = truncateResultText(text, 2048)
    expect(out).toMatch(/\n\d+: x{50}\n\[output truncated at \d+ bytes of \d+;/)
  })

  it('is applied by the server, and an invalid cap is refused', () => {
    expect(() => createMcpServer({ tools: [], maxResultBytes: 100 })).toThrow(/maxResultBytes must be an integer of at least 1024/)
    expect(() => createMcpServer({ tools: [], maxResultBytes: Number.POSITIVE_INFINITY })).not.toThrow()
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(MiB)
  })
})

/** serveStdio over PassThrough streams, with the replies and stderr lines it wrote. */
function pipeRig(maxMessageBytes: number): {
  stdin: PassThrough
  replies: Reply[]
  stderr: string[]
  next: (n: number) => Promise<Reply[]>
  done: Promise<void>
} {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const stderrStream = new PassThrough()
  const replies: Reply[] = []
  const stderr: string[] = []
  createInterface({ input: stdout }).on('line', (line) => replies.push(JSON.parse(line) as Reply))
  createInterface({ input: stderrStream }).on('line', (line) => stderr.push(line))
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'alpha\n' } })
  const server = createMcpServer({ tools: createFileTools({ fs }) })
  const done = serveStdio(server, { stdin, stdout, stderr: stderrStream, maxMessageBytes })
  const next = async (n: number): Promise<Reply[]> => {
    for (let i = 0; i < 200 && replies.length < n; i++) await new Promise((r) => setTimeout(r, 5))
    return replies.slice(0, n)
  }
  return { stdin, replies, stderr, next, done }
}

describe('BoundedStdioTransport in process (limit 1024 bytes)', () => {
  const ping = (id: number | string): string => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping"}\n`
  const pong = (id: number | string): Reply => ({ jsonrpc: '2.0', id, result: {} }) as Reply

  it('answers an oversized request with -32600 naming the limit, then serves the next one', async () => {
    const rig = pipeRig(1024)
    const big = `{"method":"tools/call","params":{"name":"write","arguments":{"file_path":"b","content":"${'x'.repeat(5000)}"}},"jsonrpc":"2.0","id":"req-1"}\n`
    // Split anywhere: across the limit, inside the id, inside the newline's neighbours.
    for (let i = 0; i < big.length; i += 333) rig.stdin.write(big.slice(i, i + 333))
    rig.stdin.write(ping(2))
    const [refused, answered] = await rig.next(2)
    expect(refused).toMatchObject({ jsonrpc: '2.0', id: 'req-1', error: { code: -32600, data: { messageBytes: big.length - 1, maxMessageBytes: 1024 } } })
    expect(refused?.error?.message).toContain("over this server's limit of 1024 bytes per message")
    expect(answered).toEqual(pong(2))
    expect(rig.stderr).toEqual([
      `seamfs mcp: dropped a message of ${big.length - 1} bytes over the limit of 1024 bytes (maxMessageBytes); answered request "req-1" with error -32600`,
    ])
    rig.stdin.end()
    await rig.done
  })

  it('reports an oversized notification on stderr only', async () => {
    const rig = pipeRig(1024)
    rig.stdin.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'y'.repeat(3000)}"}}\n${ping(1)}`)
    expect(await rig.next(1)).toEqual([pong(1)])
    expect(rig.stderr).toEqual([
      expect.stringMatching(/^seamfs mcp: dropped a message of \d+ bytes over the limit of 1024 bytes \(maxMessageBytes\); no request id found/),
    ])
    rig.stdin.end()
    await rig.done
  })

  it('answers malformed JSON with -32700 and id null, and a non-JSON-RPC object with -32600', async () => {
    const rig = pipeRig(1024)
    rig.stdin.write('{"jsonrpc":"2.0","id":1,"method":\n')
    rig.stdin.write('{"jsonrpc":"2.0","id":5,"method":7}\r\n')
    rig.stdin.write('{"jsonrpc":"2.0","id":6,"result":"a malformed response: never answered"\n')
    rig.stdin.write('{"jsonrpc":"2.0","id":6,"error":"neither"}\n\n   \n')
    rig.stdin.write(ping(3).replace('\n', '\r\n'))
    const replies = await rig.next(4)
    expect(replies[0]).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    expect(replies[0]?.error?.message).toMatch(/^Parse error: the message is not valid JSON/)
    expect(replies[1]).toMatchObject({ id: 5, error: { code: -32600 } })
    // The malformed-but-parsable response is dropped quietly; the unparsable one is a parse error.
    expect(replies[2]).toMatchObject({ id: null, error: { code: -32700 } })
    expect(replies[3]).toEqual(pong(3))
    expect(rig.stderr).toContain('seamfs mcp: dropped a malformed JSON-RPC response')
    rig.stdin.end()
    await rig.done
  })

  it('a message the SDK cannot handle (a response nested 10,000 deep) is dropped with a stderr line; the server goes on', async () => {
    const rig = pipeRig(1024 * 1024)
    const deep = `{"jsonrpc":"2.0","id":424242,"result":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}\n`
    rig.stdin.write(deep)
    rig.stdin.write(ping(7))
    expect(await rig.next(1)).toEqual([pong(7)])
    expect(rig.stderr.some((line) => line.startsWith('seamfs mcp: dropped a message the server could not handle'))).toBe(true)
    rig.stdin.end()
    await rig.done
  })

  it('a client that stops reading: every reply waits on one drain, and no listener piles up', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough({ highWaterMark: 16 })
    const warnings: string[] = []
    const onWarning = (w: Error): number => warnings.push(w.name)
    process.on('warning', onWarning)
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'alpha\n' } })
    const done = serveStdio(createMcpServer({ tools: createFileTools({ fs }) }), { stdin, stdout, stderr: new PassThrough() })
    for (let i = 0; i < 50; i++) stdin.write(ping(i))
    await new Promise((r) => setTimeout(r, 100))
    expect(stdout.listenerCount('drain')).toBeLessThanOrEqual(2)
    // Reading again lets every reply through.
    const lines: string[] = []
    createInterface({ input: stdout }).on('line', (line) => lines.push(line))
    for (let i = 0; i < 100 && lines.length < 50; i++) await new Promise((r) => setTimeout(r, 10))
    expect(lines.length).toBe(50)
    process.off('warning', onWarning)
    expect(warnings).not.toContain('MaxListenersExceededWarning')
    stdin.end()
    await done
  })

  it('keeps the contract: ends when stdin ends, refuses a bad limit', async () => {
    const rig = pipeRig(DEFAULT_MAX_MESSAGE_BYTES)
    rig.stdin.end(ping(1))
    await rig.done
    expect(rig.replies.length).toBeLessThanOrEqual(1)
    await expect(serveStdio(createMcpServer({ tools: [] }), { stdin: new PassThrough(), stdout: new PassThrough(), maxMessageBytes: 0 })).rejects.toThrow(
      /maxMessageBytes must be a positive integer/,
    )
  })
})

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-limits-server.js', import.meta.url))
const PACKAGES = fileURLToPath(new URL('../../', import.meta.url))
// A plain `node` child has no "source" condition: it runs dist/ (mcp-stdio.js is this feature's; without it the build is stale).
const BUILT = [
  'core/dist/index.js',
  'backend-memory/dist/index.js',
  'tools/dist/index.js',
  'mcp/dist/index.js',
  'mcp/dist/mcp-stdio.js',
  'mcp/dist/structured-cap.js',
]
const missing = BUILT.filter((rel) => !existsSync(join(PACKAGES, rel)))
const title =
  missing.length === 0
    ? 'oversized messages to a child-process MCP server'
    : `oversized messages to a child-process MCP server — SKIPPED: dist build missing (${missing.join(', ')}); run \`npx tsc -b\``

/** A JSON-RPC client over a child's stdio that writes with backpressure. */
class RawClient {
  readonly child: ChildProcessWithoutNullStreams
  stderr = ''
  #id = 100
  readonly #arrived = new Map<string, Reply[]>()
  readonly #waiting = new Map<string, (reply: Reply) => void>()
  #exited: Error | undefined

  constructor() {
    this.child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stderr.on('data', (chunk) => (this.stderr += String(chunk)))
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const reply = JSON.parse(line) as Reply
      const key = JSON.stringify(reply.id ?? null)
      const waiter = this.#waiting.get(key)
      if (waiter === undefined) this.#arrived.set(key, [...(this.#arrived.get(key) ?? []), reply])
      else {
        this.#waiting.delete(key)
        waiter(reply)
      }
    })
    this.child.on('exit', (code, signal) => (this.#exited = new Error(`server exited (code ${code}, signal ${signal}); stderr: ${this.stderr}`)))
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  newId(): number {
    return this.#id++
  }

  /** The reply with this id (`null` for a parse error), within `ms`. */
  async reply(id: number | null, ms = 10_000): Promise<Reply> {
    const key = JSON.stringify(id)
    const queued = this.#arrived.get(key)?.shift()
    if (queued !== undefined) return queued
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(this.#exited ?? new Error(`no reply to ${key} in ${ms} ms; stderr: ${this.stderr}`)), ms)
      this.#waiting.set(key, (reply) => {
        clearTimeout(timer)
        resolve(reply)
      })
    })
  }

  /** Writes with backpressure; fails fast if the server exited or stopped reading. */
  async write(data: string | Buffer): Promise<void> {
    if (this.#exited !== undefined) throw this.#exited
    if (this.child.stdin.write(data)) return
    const stuck = AbortSignal.timeout(10_000)
    await once(this.child.stdin, 'drain', { signal: stuck }).catch(() => {
      throw this.#exited ?? new Error(`the server stopped reading stdin; stderr: ${this.stderr}`)
    })
  }

  async request(method: string, params: Record<string, unknown>): Promise<Reply> {
    const id = this.newId()
    await this.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    return this.reply(id)
  }

  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const reply = await this.request('tools/call', { name, arguments: args })
    if (reply.result === undefined) throw new Error(`tools/call ${name} failed: ${JSON.stringify(reply.error)}`)
    return reply.result as unknown as CallToolResult
  }

  /** Streams one message of `mib` MiB of content in 1 MiB chunks; `id` goes first, last (the SDK's order) or nowhere. */
  async stream(mib: number, id: number | undefined, idFirst = false): Promise<void> {
    const at = id === undefined ? '' : `"id":${id},`
    const method =
      id === undefined
        ? '"method":"notifications/message","params":{"data":"'
        : '"method":"tools/call","params":{"name":"write","arguments":{"file_path":"big.txt","content":"'
    await this.write(idFirst ? `{"jsonrpc":"2.0",${at}${method}` : `{${method}`)
    const chunk = Buffer.alloc(MiB, 'x')
    for (let i = 0; i < mib; i++) await this.write(chunk)
    const close = id === undefined ? '"}' : '"}}'
    await this.write(idFirst ? `${close}}\n` : `${close},${at}"jsonrpc":"2.0"}\n`)
  }
}

const text = (r: CallToolResult): string => (r.content[0]?.type === 'text' ? r.content[0].text : '')

describe.skipIf(missing.length > 0)(title, () => {
  let client: RawClient
  let baselineRss = 0

  beforeAll(async () => {
    client = new RawClient()
    const init = await client.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '0' } })
    expect(init.result).toMatchObject({ serverInfo: { name: 'seamfs-limits' } })
    await client.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    baselineRss = Number(text(await client.call('peak_rss', {})))
  })

  afterAll(() => {
    if (client.alive) client.child.kill('SIGKILL')
  })

  async function expectServing(): Promise<void> {
    const read = await client.call('read', { file_path: 'hello.txt' })
    expect(read.isError).toBe(false)
    expect(text(read)).toContain('1: hello from the seed')
    expect(client.alive).toBe(true)
  }

  it.each([
    [10, false],
    [50, true],
    [200, false],
  ])('a %i MiB request (id first: %s) gets -32600 naming the limit; the server lives and answers the next call', async (mib, idFirst) => {
    const id = client.newId()
    await client.stream(mib, id, idFirst)
    const reply = await client.reply(id)
    expect(reply.error).toMatchObject({ code: -32600, data: { messageBytes: expect.any(Number) as number, maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES } })
    expect(reply.error?.message).toContain(`limit of ${DEFAULT_MAX_MESSAGE_BYTES} bytes per message`)
    expect((reply.error?.data as { messageBytes: number }).messageBytes).toBeGreaterThan(mib * MiB)
    await expectServing()
    // It was discarded unread: nothing was written.
    expect(text(await client.call('read', { file_path: 'big.txt' }))).toMatch(/^Error: .*not found/i)
  })

  it('a 50 MiB notification (no id) gets a stderr line; the server lives', async () => {
    await client.stream(50, undefined)
    await expectServing()
    expect(client.stderr).toMatch(/seamfs mcp: dropped a message of \d+ bytes over the limit of 4194304 bytes \(maxMessageBytes\); no request id found/)
  })

  it('memory stays bounded: the peak RSS after 310 MiB of oversized messages is far below one message', async () => {
    const peak = Number(text(await client.call('peak_rss', {})))
    // A server that buffered the 200 MiB line would peak 200 MiB over its baseline; measured: about 35 MiB
    // over (garbage pipe chunks awaiting GC, and one 4 MiB prefix), nearly all of it by the 50 MiB message.
    expect(peak - baselineRss, `baseline ${baselineRss} bytes, peak ${peak} bytes`).toBeLessThan(100 * MiB)
  })

  it('a malformed JSON line gets -32700 with id null, and the server goes on', async () => {
    await client.write('{"jsonrpc":"2.0","id":1,"method":"tools/call",\n')
    const reply = await client.reply(null)
    expect(reply.error?.code).toBe(-32700)
    await expectServing()
  })

  it('a result over 1 MiB is cut on a line with a footer the model can act on', async () => {
    const result = await client.call('big', { bytes: 3 * MiB })
    const out = text(result)
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_BYTES)
    const [, kept, total] = FOOTER.exec(out) ?? []
    expect(Number(kept)).toBeGreaterThan(DEFAULT_MAX_RESULT_BYTES - 1024)
    expect(Number(total)).toBeGreaterThanOrEqual(3 * MiB)
    expect(out).toMatch(/\n\d+: €{100}\n\[output truncated/)
  })

  it('ends on its own when stdin closes', async () => {
    const exited = client.alive ? once(client.child, 'exit') : Promise.resolve()
    client.child.stdin.end()
    await exited
    expect(client.child.exitCode).toBe(0)
    expect(client.stderr).toContain('mcp-limits-server: closed')
  })
})

describe.skipIf(missing.length > 0)('the SDK client against the child-process server', () => {
  it('a 10 MiB tools/call rejects with McpError -32600, and the next call is answered', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'pipe' })
    const client = new Client({ name: 'limits-sdk', version: '0' })
    await client.connect(transport)
    try {
      const big = client.callTool({ name: 'write', arguments: { file_path: 'big.txt', content: 'z'.repeat(10 * MiB) } }, undefined, { timeout: 10_000 })
      await expect(big).rejects.toBeInstanceOf(McpError)
      await expect(big).rejects.toMatchObject({ code: -32600 })
      const read = (await client.callTool({ name: 'read', arguments: { file_path: 'hello.txt' } })) as CallToolResult
      expect(text(read)).toContain('1: hello from the seed')
    } finally {
      await client.close()
    }
  })
})
