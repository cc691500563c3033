/**
 * A heavy edit on one request must not stall the server: the edit gives the
 * event loop turns, so a `ping` sent meanwhile is answered within 100 ms. The real SDK client over
 * the SDK's in-memory transport, the memory backend.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools } from '@seamfs/tools'
import { createMcpServer } from '@seamfs/mcp'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

async function connected(fs: MemoryFileSystem): Promise<Client> {
  const server = createMcpServer({ tools: createFileTools({ fs }) })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'test', version: '0.0.0' })
  await server.connect(serverSide)
  await client.connect(clientSide)
  open.push(client, server)
  return client
}

/**
 * Pings `client` until `done` settles; for each ping, the CPU time this process spent until its
 * answer, in ms. Client and server share the process: a server that holds its event loop for the
 * edit spends that CPU before it answers, while time the machine gave other processes (a loaded
 * test machine) does not count.
 */
async function pingWhile(client: Client, done: Promise<unknown>): Promise<number[]> {
  let settled = false
  void done.finally(() => (settled = true))
  const times: number[] = []
  while (!settled) {
    const started = process.cpuUsage()
    await client.ping()
    const { user, system } = process.cpuUsage(started)
    times.push((user + system) / 1000)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return times
}

// CPU time, not wall-clock: see pingWhile. The retry covers what CPU time still counts of others: the
// garbage collector's threads, whose work a large edit causes but a ping does not wait for.
describe('a ping is answered while a heavy edit runs', { retry: 2 }, () => {
  it('a list of replace_all edits, a million replacements over 8 MB', async () => {
    const body = `ab${'x'.repeat(78)}`.repeat(100_000)
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': body } })
    const client = await connected(fs)
    const edits = Array.from({ length: 10 }, (_, i) => ({ old_string: i % 2 === 0 ? 'ab' : 'ba', new_string: i % 2 === 0 ? 'ba' : 'ab', replace_all: true }))
    const editing = client.callTool({ name: 'edit', arguments: { file_path: 'f.txt', edits } }) as Promise<CallToolResult>
    const times = await pingWhile(client, editing)
    const result = await editing
    expect(result.isError).toBe(false)
    // The old engine held the loop for the whole list (seconds): the pings waited for it.
    expect(times.length).toBeGreaterThan(1)
    expect(Math.max(...times)).toBeLessThan(100)
  })

  it('a one-line edit of a 64 MiB file', async () => {
    const body = Buffer.alloc(64 * 1024 * 1024, 'line of text\n').toString('latin1')
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'big.txt': `${body}the end\n` } })
    const client = await connected(fs)
    const editing = client.callTool({
      name: 'edit',
      arguments: { file_path: 'big.txt', old_string: 'the end', new_string: 'THE END' },
    }) as Promise<CallToolResult>
    const times = await pingWhile(client, editing)
    const result = await editing
    expect(result.isError).toBe(false)
    expect(Math.max(...times)).toBeLessThan(100)
  })
})
