/**
 * The MCP roots protocol: the roots a client lists become the fence of its calls (narrowing the
 * server's own, never widening it), a change of them is honoured, and a list that cannot be had
 * fails the calls closed. A real SDK Client and the Server over the SDK's InMemoryTransport.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { SandboxedFileSystem } from '@seamfs/core'
import { createFileTools, ObservationPolicy, type FileTool } from '@seamfs/tools'
import { createMcpServer, MCP_CODE_META_KEY, type McpRoot } from '@seamfs/mcp'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

const FILES = { '/srv/a/one.txt': 'in a\n', '/srv/b/two.txt': 'in b\n', '/srv/top.txt': 'top\n', '/elsewhere/secret.txt': 'secret\n' }

/** A server fenced to /srv (as a harness is), whose client-listed roots narrow it with a second sandbox. */
function serve(timeoutMs?: number): { server: ReturnType<typeof createMcpServer>; asked: McpRoot[][] } {
  const store = new MemoryFileSystem({ cwd: '/', files: FILES })
  const fenced = new SandboxedFileSystem(store, { mode: 'workspace-write', workspaceRoot: '/srv' })
  const policy = new ObservationPolicy()
  const asked: McpRoot[][] = []
  const within = (roots: readonly McpRoot[]): FileTool[] => {
    asked.push([...roots])
    const [workspaceRoot, ...writableRoots] = roots.map((r) => r.path)
    return createFileTools({ fs: new SandboxedFileSystem(fenced, { mode: 'workspace-write', workspaceRoot: workspaceRoot!, writableRoots }), policy })
  }
  const server = createMcpServer({ tools: createFileTools({ fs: fenced, policy }), roots: { within, ...(timeoutMs === undefined ? {} : { timeoutMs }) } })
  open.push(server)
  return { server, asked }
}

/** A client declaring the roots capability, answering `roots/list` with `roots()` (or never, when it returns undefined). */
async function connect(server: ReturnType<typeof createMcpServer>, roots: () => { uri: string; name?: string }[] | undefined, capable = true): Promise<Client> {
  const client = new Client({ name: 'roots-test', version: '0.0.0' }, capable ? { capabilities: { roots: { listChanged: true } } } : {})
  if (capable) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      const listed = roots()
      if (listed === undefined) await new Promise(() => undefined)
      return { roots: listed ?? [] }
    })
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  await client.connect(clientSide)
  open.push(client)
  return client
}

const read = async (client: Client, path: string): Promise<CallToolResult> =>
  (await client.callTool({ name: 'read', arguments: { file_path: path } })) as CallToolResult
const textOf = (r: CallToolResult): string => (r.content[0]?.type === 'text' ? r.content[0].text : '')

describe('MCP roots: the client-listed roots fence its calls', () => {
  it('the listed root becomes the fence and the base of relative paths; the rest of the server fence is out of reach', async () => {
    const { server, asked } = serve()
    const client = await connect(server, () => [{ uri: 'file:///srv/a', name: 'a' }])
    const inside = await read(client, 'one.txt')
    expect(inside.isError, textOf(inside)).toBe(false)
    expect(textOf(inside)).toContain('1: in a')
    for (const path of ['/srv/b/two.txt', '/srv/top.txt', '../top.txt']) {
      const denied = await read(client, path)
      expect(denied.isError, path).toBe(true)
      expect(denied._meta?.[MCP_CODE_META_KEY], path).toBe('FS_SANDBOX_DENIED')
    }
    const write = (await client.callTool({ name: 'write', arguments: { file_path: '/srv/b/new.txt', content: 'x' } })) as CallToolResult
    expect(write._meta?.[MCP_CODE_META_KEY]).toBe('FS_SANDBOX_DENIED')
    expect(asked).toEqual([[{ uri: 'file:///srv/a', name: 'a', path: '/srv/a' }]])
  })

  it('a root outside the server fence reaches nothing: client roots narrow, never widen', async () => {
    const { server } = serve()
    const client = await connect(server, () => [{ uri: 'file:///elsewhere' }])
    const r = await read(client, '/elsewhere/secret.txt')
    expect(r._meta?.[MCP_CODE_META_KEY]).toBe('FS_SANDBOX_DENIED')
    expect(textOf(r)).not.toContain('secret\n')
  })

  it('roots/list_changed: the new roots fence the calls after it', async () => {
    const { server, asked } = serve()
    let roots = [{ uri: 'file:///srv/a' }]
    const client = await connect(server, () => roots)
    expect((await read(client, '/srv/a/one.txt')).isError).toBe(false)
    roots = [{ uri: 'file:///srv/b' }]
    await client.sendRootsListChanged()
    // The notification and the next call go out in order: the call waits for the new list.
    expect((await read(client, '/srv/b/two.txt')).isError).toBe(false)
    expect((await read(client, '/srv/a/one.txt'))._meta?.[MCP_CODE_META_KEY]).toBe('FS_SANDBOX_DENIED')
    expect(asked.map((list) => list.map((r) => r.path))).toEqual([['/srv/a'], ['/srv/b']])
  })

  it('no roots listed, or a client without the capability: the server fence serves', async () => {
    for (const [what, client] of [
      ['an empty list', await connect(serve().server, () => [])],
      ['no roots capability', await connect(serve().server, () => [{ uri: 'file:///srv/a' }], false)],
    ] as const) {
      expect((await read(client, '/srv/b/two.txt')).isError, what).toBe(false)
      expect((await read(client, '/elsewhere/secret.txt'))._meta?.[MCP_CODE_META_KEY], what).toBe('FS_SANDBOX_DENIED')
    }
  })

  it('a client that declared roots and calls before saying it is initialized still gets its fence', async () => {
    const { server } = serve()
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const answers = new Map<number, unknown>()
    clientSide.onmessage = (message) => {
      const m = message as { id?: number; method?: string; result?: unknown }
      // The server asks for the roots: answer as a client would.
      if (m.method === 'roots/list') void clientSide.send({ jsonrpc: '2.0', id: m.id as number, result: { roots: [{ uri: 'file:///srv/a' }] } })
      else if (m.id !== undefined) answers.set(m.id, m.result)
    }
    await clientSide.start()
    await clientSide.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'raw', version: '0' } },
    })
    // No notifications/initialized: the call comes first.
    await clientSide.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { file_path: '/srv/b/two.txt' } } })
    for (let i = 0; i < 200 && !answers.has(2); i++) await new Promise((resolve) => setTimeout(resolve, 5))
    const result = answers.get(2) as CallToolResult | undefined
    expect(result?.isError).toBe(true)
    expect(result?._meta?.[MCP_CODE_META_KEY]).toBe('FS_SANDBOX_DENIED')
    await clientSide.close()
  })

  it('a list that never comes, one the SDK refuses, or a root of another host: every call fails closed, saying why', async () => {
    const silent = await connect(serve(300).server, () => undefined)
    const waited = await read(silent, '/srv/top.txt')
    expect(waited.isError).toBe(true)
    expect(textOf(waited)).toMatch(/^Error: the client declares roots but did not list them \(.*\); no call runs until it does/)
    // The SDK refuses a list with a URI that is not file:// (the protocol says roots are): no list, closed.
    const web = await connect(serve().server, () => [{ uri: 'https://example.com/repo' }])
    expect(textOf(await read(web, '/srv/top.txt'))).toMatch(/^Error: the client declares roots but did not list them/)
    const remote = await connect(serve().server, () => [{ uri: 'file://build-host/srv' }])
    const refused = await read(remote, '/srv/top.txt')
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain('names no path here')
    expect(textOf(refused)).not.toContain('top\n')
  })
})
