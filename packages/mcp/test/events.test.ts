/** Change events under the MCP server: each names the connection (the session) whose call made it. */
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { EventedFileSystem, type FsEvent } from '@seamfs/core'
import { createFileTools, ObservationPolicy } from '@seamfs/tools'
import { createMcpServer } from '@seamfs/mcp'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

describe('change events through MCP', () => {
  it('two connections: every event names the connection that made it, the same one across its calls', async () => {
    const fs = new EventedFileSystem(new MemoryFileSystem({ cwd: '/w' }))
    const events: FsEvent[] = []
    fs.on((e) => events.push(e))
    const tools = createFileTools({ fs, policy: new ObservationPolicy() })
    const connect = async (): Promise<Client> => {
      const server = createMcpServer({ tools })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const client = new Client({ name: 'events', version: '0.0.0' })
      await server.connect(serverSide)
      await client.connect(clientSide)
      open.push(client, server)
      return client
    }
    const [one, two] = [await connect(), await connect()]
    await one.callTool({ name: 'write', arguments: { file_path: 'a.txt', content: '1' } })
    await two.callTool({ name: 'write', arguments: { file_path: 'b.txt', content: '2' } })
    await one.callTool({ name: 'write', arguments: { file_path: 'c.txt', content: '3' } })
    expect(events.map((e) => e.target.path)).toEqual(['/w/a.txt', '/w/b.txt', '/w/c.txt'])
    const [a, b, c] = events.map((e) => e.actor)
    expect(a).toBeTypeOf('object')
    expect(a).toBe(c)
    expect(a).not.toBe(b)
  })
})
