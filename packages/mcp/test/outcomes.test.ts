/**
 * Honest outcomes reach the model and the application through mcp: a failed call's `retryable`, and a mutation's
 * `indeterminate` (its answer was lost: it may have been made), travel from the tool result through
 * the AI SDK tool (its `FileToolError`), the LangChain tool (the `ToolMessage` artifact and the
 * error), MCP (`_meta`) and deepagents (the text the model reads), each with the text that tells the
 * model to read before retrying. The store is memory frozen mid-call; the deadline ends the call.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createFileTools, ObservationPolicy } from '@seamfs/tools'
import { createMcpServer, MCP_CODE_META_KEY, MCP_INDETERMINATE_META_KEY, MCP_RETRYABLE_META_KEY } from '../src/index.js'
import { frozenStores } from '../../backend-memory/test/frozen-store.js'

const CONFIG = { callTimeoutMs: 200 }
const REMEDY = /may or may not have been made: read the file/
const stores = frozenStores()
const closers: Array<{ close(): Promise<void> }> = []

afterEach(async () => {
  for (const c of closers.splice(0)) await c.close().catch(() => undefined)
  await stores.cleanup()
})

describe('an edit whose store stops answering', () => {
  it('MCP: _meta carries the code and both flags; a definite failure carries neither', async () => {
    const fs = stores.make()
    const server = createMcpServer({ tools: createFileTools({ fs, policy: new ObservationPolicy(), cwd: '/w', config: CONFIG }) })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const client = new Client({ name: 'test', version: '0.0.0' })
    await server.connect(serverSide)
    await client.connect(clientSide)
    closers.push(client, server)
    const callTool = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
      (await client.callTool({ name, arguments: args })) as CallToolResult
    const missing = await callTool('read', { file_path: 'missing.txt' })
    expect(missing._meta).toEqual({ [MCP_CODE_META_KEY]: 'FS_NOT_FOUND' })
    await callTool('read', { file_path: 'notes.txt' })
    fs.freeze()
    const edit = await callTool('edit', { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' })
    expect(edit.isError).toBe(true)
    expect(edit._meta).toEqual({ [MCP_CODE_META_KEY]: 'FS_IO_ERROR', [MCP_RETRYABLE_META_KEY]: true, [MCP_INDETERMINATE_META_KEY]: true })
    expect((edit.content[0] as { text: string }).text).toMatch(REMEDY)
  })
})
