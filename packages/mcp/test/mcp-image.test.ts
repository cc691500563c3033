/**
 * Images over MCP: a `read` of a picture is a text block then MCP image content, with the image's
 * type and size (never its bytes) in `structuredContent`; a huge file claiming to be an image is an
 * error of text only.
 */
import { closeSync, ftruncateSync, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ObservationPolicy } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools } from '@seamfs/tools'
import { createMcpServer, MCP_CODE_META_KEY, toMcpResult } from '@seamfs/mcp'

/** A real 1×1 PNG. */
const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))

const open: Array<{ close(): Promise<void> }> = []
let base: string | undefined
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
  if (base !== undefined) rmSync(base, { recursive: true, force: true })
  base = undefined
})

describe('MCP: an image read is image content', () => {
  it('read of a PNG is a text block then {type: image, data, mimeType}; a text read stays one text block', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'p.png': PNG, 'a.txt': 'hi\n' } })
    const server = createMcpServer({ tools: createFileTools({ fs, policy: new ObservationPolicy() }) })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const client = new Client({ name: 'test', version: '0.0.0' })
    open.push(server, client)
    await server.connect(serverSide)
    await client.connect(clientSide)
    await client.listTools()
    const image = (await client.callTool({ name: 'read', arguments: { file_path: 'p.png' } })) as CallToolResult
    expect(image.isError).toBe(false)
    expect(image.content).toEqual([
      { type: 'text', text: `<path>/w/p.png</path>\n<type>image</type>\n<content>\n(image/png, ${PNG.length} bytes, returned as image content)\n</content>` },
      { type: 'image', data: Buffer.from(PNG).toString('base64'), mimeType: 'image/png' },
    ])
    expect(image.structuredContent).toEqual({ path: '/w/p.png', offset: 1, lines: [], totalLines: 0, image: { mimeType: 'image/png', size: PNG.length } })
    const text = (await client.callTool({ name: 'read', arguments: { file_path: 'a.txt' } })) as CallToolResult
    expect(text.content).toEqual([
      { type: 'text', text: '<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: hi\n\n(End of file - total 1 lines)\n</content>' },
    ])
    // the image read was recorded for this connection's session: the delete goes through
    const deleted = (await client.callTool({ name: 'delete', arguments: { path: 'p.png' } })) as CallToolResult
    expect(deleted.content).toEqual([{ type: 'text', text: 'Deleted file "/w/p.png".' }])
  })

  it('a 2 GiB sparse file with PNG magic is FS_TOO_LARGE over MCP: text only, no structured content', async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-mcp-img-')))
    const fd = openSync(join(base, 'huge.png'), 'w')
    try {
      writeSync(fd, PNG.subarray(0, 16))
      ftruncateSync(fd, 2 ** 31)
    } finally {
      closeSync(fd)
    }
    const read = createFileTools({ fs: new LocalFileSystem({ cwd: base }) }).find((t) => t.name === 'read')
    const started = Date.now()
    const result = await read!.execute({ file_path: 'huge.png' })
    expect(Date.now() - started).toBeLessThan(5000)
    const mcp = toMcpResult(result, undefined, read?.structured)
    expect(mcp.isError).toBe(true)
    expect(mcp._meta?.[MCP_CODE_META_KEY]).toBe('FS_TOO_LARGE')
    expect(mcp.content.every((c) => c.type === 'text')).toBe(true)
    expect(mcp.structuredContent).toBeUndefined()
  })
})
