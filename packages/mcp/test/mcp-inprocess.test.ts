/** createMcpServer / serveStdio in-process: a Client and the Server paired over the SDK's InMemoryTransport. */
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, ObservationPolicy, type FileTool, type ToolContext } from '@seamfs/tools'
import { createMcpServer, MCP_CODE_META_KEY, serveStdio, toMcpResult, type McpServerOptions } from '@seamfs/mcp'

const CWD = '/w'

interface Rig {
  readonly fs: MemoryFileSystem
  readonly tools: FileTool[]
  readonly policy: ObservationPolicy
  readonly server: Server
}

const open: Array<{ close(): Promise<void> }> = []

afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

function rig(options: Partial<McpServerOptions> & { files?: Record<string, string | null> } = {}): Rig {
  const fs = new MemoryFileSystem({ cwd: CWD, files: options.files ?? {} })
  const policy = new ObservationPolicy()
  const tools = options.tools ? [...options.tools] : createFileTools({ fs, policy })
  const server = createMcpServer({ ...options, tools })
  open.push(server)
  return { fs, tools, policy, server }
}

async function connect(server: Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'test', version: '0.0.0' })
  await server.connect(serverSide)
  await client.connect(clientSide)
  open.push(client)
  return client
}

async function call(client: Client, name: string, args?: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool(args === undefined ? { name } : { name, arguments: args })) as CallToolResult
}

const text = (r: CallToolResult): string => {
  const [first] = r.content
  if (first?.type !== 'text' || r.content.length !== 1) throw new Error(`expected one text block, got ${JSON.stringify(r.content)}`)
  return first.text
}
const code = (r: CallToolResult): unknown => r._meta?.[MCP_CODE_META_KEY]

const peek = (fs: MemoryFileSystem, rel: string): unknown => fs.toJSON()[rel]

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('tools/list', () => {
  it('lists every tool with its name, title, JSON Schema as is, and mapped annotations', async () => {
    const { tools, server } = rig()
    const client = await connect(server)
    const { tools: listed } = await client.listTools()
    expect(listed.map((t) => t.name)).toEqual(tools.map((t) => t.name))
    expect(listed.map((t) => t.name)).toEqual(expect.arrayContaining(['list', 'read', 'write', 'edit']))
    for (const tool of tools) {
      const mcp = listed.find((t) => t.name === tool.name)
      expect(mcp?.title).toBe(tool.annotations.title)
      expect(mcp?.inputSchema).toEqual(tool.inputSchema)
      expect(mcp?.annotations).toEqual({
        title: tool.annotations.title,
        readOnlyHint: tool.annotations.readOnlyHint,
        destructiveHint: tool.annotations.destructiveHint,
        idempotentHint: tool.annotations.idempotentHint,
        openWorldHint: tool.annotations.openWorldHint,
      })
      // The description is the only text a client shows the model: it carries the prompt guidance.
      expect(mcp?.description).toBe(`${tool.description}\n\n${tool.prompt}`)
    }
    const byName = Object.fromEntries(listed.map((t) => [t.name, t]))
    expect(byName['read']?.annotations?.readOnlyHint).toBe(true)
    expect(byName['list']?.annotations?.readOnlyHint).toBe(true)
    expect(byName['write']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(byName['edit']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
  })

  it('includePrompt: false keeps the bare description', async () => {
    const { tools, server } = rig({ includePrompt: false })
    const { tools: listed } = await (await connect(server)).listTools()
    expect(listed.map((t) => t.description)).toEqual(tools.map((t) => t.description))
  })

  it('reports serverInfo (default name seamfs and the package version) and the tools capability', async () => {
    const client = await connect(rig().server)
    expect(client.getServerVersion()).toEqual({ name: 'seamfs', version: '0.1.0' })
    expect(client.getServerCapabilities()?.tools).toBeDefined()
    const named = await connect(rig({ name: 'ws', version: '9.9.9', instructions: 'be careful' }).server)
    expect(named.getServerVersion()).toEqual({ name: 'ws', version: '9.9.9' })
    expect(named.getInstructions()).toBe('be careful')
  })

  it('refuses two tools with one name', () => {
    const tools = createFileTools({ fs: new MemoryFileSystem({ cwd: CWD }) })
    expect(() => createMcpServer({ tools: [...tools, tools[0]!] })).toThrow(TypeError)
  })
})

describe('tools/call', () => {
  it('runs a tool and returns its text as one text block, isError false, no code, its structured content', async () => {
    const { fs, server } = rig()
    const client = await connect(server)
    const r = await call(client, 'write', { file_path: 'a.txt', content: 'one\n' })
    expect(r.isError).toBe(false)
    expect(text(r)).toBe(`<path>${CWD}/a.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>`)
    expect(r._meta).toBeUndefined()
    expect(r.structuredContent).toEqual({ path: `${CWD}/a.txt`, operation: 'create', diff: null, dryRun: false })
    expect(peek(fs, 'a.txt')).toBe('one\n')
  })

  it('a failure keeps its text exactly "Error: <message>" and carries the code in _meta', async () => {
    const { fs, tools, server } = rig({ files: { 'seen-elsewhere.txt': 'theirs\n' } })
    const client = await connect(server)
    const r = await call(client, 'write', { file_path: 'seen-elsewhere.txt', content: 'mine\n' })
    // The same call straight on the tool (no session: the same refusal) gives the same text.
    const direct = await tools.find((t) => t.name === 'write')!.execute({ file_path: 'seen-elsewhere.txt', content: 'mine\n' })
    expect(r.isError).toBe(true)
    expect(code(r)).toBe('FS_NOT_OBSERVED')
    expect(text(r)).toBe(direct.text)
    expect(text(r)).toMatch(/^Error: .* — read the file, then retry$/)
    expect(peek(fs, 'seen-elsewhere.txt')).toBe('theirs\n')
  })

  it('an input error has no code', async () => {
    const client = await connect(rig().server)
    const r = await call(client, 'read', { file_path: '' })
    expect(r.isError).toBe(true)
    expect(text(r)).toBe('Error: file_path must be a non-empty string')
    expect(code(r)).toBeUndefined()
  })

  it('an unknown tool is an isError result, not a protocol error', async () => {
    const { tools, server } = rig()
    const client = await connect(server)
    const r = await call(client, 'delete_everything', { path: '/' })
    expect(r.isError).toBe(true)
    expect(text(r)).toBe(`Error: unknown tool "delete_everything" (available: ${tools.map((t) => t.name).join(', ')})`)
    expect(code(r)).toBeUndefined()
    // The connection is still usable.
    expect((await call(client, 'list')).isError).toBe(false)
  })

  it('missing arguments reach the tool as {}', async () => {
    const { server } = rig({ files: { 'x.txt': 'x' } })
    const r = await call(await connect(server), 'list')
    expect(r.isError).toBe(false)
    expect(text(r)).toContain('x.txt')
  })

  it('a tool that throws (against the contract) still yields an isError result', async () => {
    const thrower: FileTool = {
      name: 'boom',
      description: 'throws',
      inputSchema: { type: 'object' },
      annotations: { title: 'Boom', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      prompt: '',
      execute: () => Promise.reject(new Error('kaput')),
    }
    const client = await connect(rig({ tools: [thrower] }).server)
    expect((await client.listTools()).tools[0]?.description).toBe('throws')
    const r = await call(client, 'boom', {})
    expect(r).toMatchObject({ isError: true })
    expect(text(r)).toBe('Error: internal error: kaput')
  })

  it('toMcpResult maps a result with and without a code', () => {
    expect(toMcpResult({ text: 'ok', isError: false, value: { big: 'x' } })).toEqual({ content: [{ type: 'text', text: 'ok' }], isError: false })
    expect(toMcpResult({ text: 'Error: gone', isError: true, code: 'FS_NOT_FOUND' })).toEqual({
      content: [{ type: 'text', text: 'Error: gone' }],
      isError: true,
      _meta: { 'seamfs/code': 'FS_NOT_FOUND' },
    })
  })
})

describe('sessions', () => {
  it('observations persist across the calls of one connection (read, then edit and write)', async () => {
    const { fs, server } = rig({ files: { 'a.txt': 'alpha\n' } })
    const client = await connect(server)
    expect(code(await call(client, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' }))).toBe('FS_NOT_OBSERVED')
    expect((await call(client, 'read', { file_path: 'a.txt' })).isError).toBe(false)
    expect((await call(client, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBe(false)
    expect((await call(client, 'write', { file_path: 'a.txt', content: 'gamma\n' })).isError).toBe(false)
    expect(peek(fs, 'a.txt')).toBe('gamma\n')
  })

  it('a new connection is a new session: it starts with no observations', async () => {
    const { server } = rig({ files: { 'a.txt': 'alpha\n' } })
    const first = await connect(server)
    expect((await call(first, 'read', { file_path: 'a.txt' })).isError).toBe(false)
    await first.close()
    await server.close()
    const second = await connect(server)
    const r = await call(second, 'write', { file_path: 'a.txt', content: 'x' })
    expect(code(r)).toBe('FS_NOT_OBSERVED')
  })

  it('two servers over one policy keep their sessions apart', async () => {
    const fs = new MemoryFileSystem({ cwd: CWD, files: { 'a.txt': 'alpha\n' } })
    const tools = createFileTools({ fs, policy: new ObservationPolicy() })
    const one = createMcpServer({ tools })
    const two = createMcpServer({ tools })
    open.push(one, two)
    const c1 = await connect(one)
    const c2 = await connect(two)
    expect((await call(c1, 'read', { file_path: 'a.txt' })).isError).toBe(false)
    expect(code(await call(c2, 'write', { file_path: 'a.txt', content: 'x' }))).toBe('FS_NOT_OBSERVED')
    expect((await call(c1, 'write', { file_path: 'a.txt', content: 'y' })).isError).toBe(false)
  })

  it('an explicit session is used on every connection (and by anyone else holding it)', async () => {
    const fs = new MemoryFileSystem({ cwd: CWD, files: { 'a.txt': 'alpha\n' } })
    const tools = createFileTools({ fs, policy: new ObservationPolicy() })
    const session = 'agent-7'
    // The host read the file for this session outside MCP.
    await tools.find((t) => t.name === 'read')!.execute({ file_path: 'a.txt' }, { session })
    const server = createMcpServer({ tools, session })
    open.push(server)
    const client = await connect(server)
    expect((await call(client, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBe(false)
    await client.close()
    await server.close()
    const again = await connect(server)
    expect((await call(again, 'write', { file_path: 'a.txt', content: 'z' })).isError).toBe(false)
    expect(fs.toJSON()['a.txt']).toBe('z')
  })

  it('the context passed to execute is { session, signal } and the session is stable per connection', async () => {
    const seen: ToolContext[] = []
    const probe: FileTool = {
      name: 'probe',
      description: 'records its context',
      inputSchema: { type: 'object' },
      annotations: { title: 'Probe', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      prompt: 'Call it.',
      execute: async (_args, context = {}) => {
        seen.push(context)
        return { text: 'ok', isError: false }
      },
    }
    const { server } = rig({ tools: [probe] })
    const client = await connect(server)
    await call(client, 'probe', {})
    await call(client, 'probe', {})
    expect(seen).toHaveLength(2)
    expect(Object.keys(seen[0]!).sort()).toEqual(['session', 'signal'])
    expect(typeof seen[0]!.session).toBe('object')
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal)
    expect(seen[1]!.session).toBe(seen[0]!.session)
    await client.close()
    await server.close()
    await call(await connect(server), 'probe', {})
    expect(seen[2]!.session).not.toBe(seen[0]!.session)
  })
})

describe('cancellation', () => {
  function waiter(): { tool: FileTool; started: Promise<void>; aborted: Promise<unknown> } {
    const started = deferred<void>()
    const aborted = deferred<unknown>()
    const tool: FileTool = {
      name: 'wait',
      description: 'waits until aborted',
      inputSchema: { type: 'object' },
      annotations: { title: 'Wait', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      prompt: '',
      execute: (_args, context = {}) =>
        new Promise((resolve) => {
          const signal = context.signal
          if (signal === undefined) return resolve({ text: 'Error: no signal', isError: true })
          signal.addEventListener('abort', () => {
            aborted.resolve(signal.reason)
            resolve({ text: 'Error: aborted', isError: true, code: 'FS_ABORTED' })
          })
          started.resolve()
        }),
    }
    return { tool, started: started.promise, aborted: aborted.promise }
  }

  it("the client's cancellation aborts the signal the tool got", async () => {
    const w = waiter()
    const client = await connect(rig({ tools: [w.tool] }).server)
    const controller = new AbortController()
    const pending = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal })
    await w.started
    controller.abort('user pressed stop')
    await expect(pending).rejects.toThrow()
    await expect(w.aborted).resolves.toBe('user pressed stop')
    // The connection goes on.
    expect((await client.listTools()).tools).toHaveLength(1)
  })

  it('closing the connection aborts in-flight calls', async () => {
    const w = waiter()
    const { server } = rig({ tools: [w.tool] })
    const client = await connect(server)
    const pending = client.callTool({ name: 'wait', arguments: {} }).catch((err: unknown) => err)
    await w.started
    await server.close()
    await w.aborted
    expect(await pending).toBeInstanceOf(Error)
  })
})

describe('serveStdio', () => {
  /** The JSON-RPC messages written to `stream`, one per line, in order. */
  function messages(stream: PassThrough): () => Promise<unknown> {
    const queue: unknown[] = []
    const waiting: Array<(m: unknown) => void> = []
    let buffer = ''
    stream.on('data', (chunk) => {
      buffer += String(chunk)
      let i: number
      while ((i = buffer.indexOf('\n')) >= 0) {
        const message = JSON.parse(buffer.slice(0, i)) as unknown
        buffer = buffer.slice(i + 1)
        const waiter = waiting.shift()
        if (waiter) waiter(message)
        else queue.push(message)
      }
    })
    return () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve)))
  }

  function request(stdin: PassThrough, next: () => Promise<unknown>, message: object): Promise<unknown> {
    stdin.write(`${JSON.stringify(message)}\n`)
    return next()
  }

  it('serves newline-delimited JSON-RPC and resolves when stdin ends, leaving no listeners', async () => {
    const { server } = rig({ files: { 'a.txt': 'hello\n' } })
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const next = messages(stdout)
    const before = { data: stdin.listenerCount('data'), end: stdin.listenerCount('end'), error: stdout.listenerCount('error') }
    let done = false
    const serving = serveStdio(server, { stdin, stdout }).then(() => (done = true))
    const init = await request(stdin, next, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    })
    expect(init).toMatchObject({ id: 1, result: { serverInfo: { name: 'seamfs' } } })
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    const read = await request(stdin, next, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { file_path: 'a.txt' } } })
    expect(read).toMatchObject({ id: 2, result: { isError: false } })
    expect(JSON.stringify(read)).toContain('1: hello')
    expect(done).toBe(false)
    stdin.end()
    await serving
    expect({ data: stdin.listenerCount('data'), end: stdin.listenerCount('end'), error: stdout.listenerCount('error') }).toEqual(before)
  })

  it('resolves when the server is closed', async () => {
    const { server } = rig()
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const serving = serveStdio(server, { stdin, stdout })
    await new Promise((r) => setImmediate(r))
    await server.close()
    await expect(serving).resolves.toBeUndefined()
  })
})
