/**
 * The structured-content cap: one keep ratio for the whole value, bisected, so the work is a
 * bounded number of passes whatever the shape; and a success that cannot be shrunk to fit is an
 * FS_TOO_LARGE failure the SDK's `Client` accepts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { FileTool } from '@seamfs/tools'
import { capStructuredContent, createMcpServer, MCP_CODE_META_KEY, MCP_STRUCTURED_META_KEY } from '@seamfs/mcp'

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))

afterEach(() => vi.restoreAllMocks())

/** `capStructuredContent(content, cap)` and how many times it serialized and parsed (each an O(size) pass). */
function counted(content: Record<string, unknown>, cap: number): { capped: ReturnType<typeof capStructuredContent>; stringify: number; parse: number } {
  const stringify = vi.spyOn(JSON, 'stringify')
  const parse = vi.spyOn(JSON, 'parse')
  const capped = capStructuredContent(content, cap)
  const counts = { stringify: stringify.mock.calls.length, parse: parse.mock.calls.length }
  stringify.mockRestore()
  parse.mockRestore()
  return { capped, ...counts }
}

describe('capStructuredContent', () => {
  it('does a bounded number of passes whatever the size: one parse and at most 27 serializations', () => {
    const members = (n: number): Record<string, unknown> =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, Array.from({ length: 10 }, () => 'q'.repeat(1000))]))
    let deep: unknown = 'leaf'.repeat(100)
    for (let i = 0; i < 3000; i++) deep = [deep, 'x'.repeat(70)]
    for (const [content, cap] of [
      [members(30), 64 * 1024],
      [members(300), 256 * 1024],
      [{ items: Array.from({ length: 200_000 }, (_, i) => `${i} ${'y'.repeat(100)}`) }, 1024],
      [{ deep }, 1024],
    ] as const) {
      const { capped, stringify, parse } = counted(content, cap)
      expect(capped.content).toBeDefined()
      expect(jsonBytes(capped.content)).toBeLessThanOrEqual(cap)
      expect(parse).toBe(1)
      expect(stringify).toBeLessThanOrEqual(27)
    }
  })

  it('content that cannot fit is found out in two serializations', () => {
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))
    const { capped, stringify } = counted(wide, 1024)
    expect(capped).toEqual({ content: undefined, overBytes: jsonBytes(wide) })
    expect(stringify).toBe(2)
  })

  it('one ratio for all: 300 arrays that each need halving all keep the same share, every key and their starts', () => {
    const content = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, ['a'.repeat(1000), 'b'.repeat(1000)]]))
    const capped = capStructuredContent(content, 64 * 1024).content as Record<string, string[]>
    expect(jsonBytes(capped)).toBeLessThanOrEqual(64 * 1024)
    expect(jsonBytes(capped)).toBeGreaterThan(60 * 1024)
    expect(Object.keys(capped)).toEqual(Object.keys(content))
    const shapes = new Set(Object.values(capped).map((items) => items.map((s) => s.length).join()))
    expect(shapes.size).toBe(1)
    for (const items of Object.values(capped)) {
      expect(items.length).toBeGreaterThanOrEqual(1)
      expect('a'.repeat(1000).startsWith(items[0] ?? 'x')).toBe(true)
    }
  })

  it('a long string keeps at least 64 characters, less one when the 64th would split a surrogate pair', () => {
    const text = `${'a'.repeat(63)}${'😀'.repeat(1000)}`
    const cap = jsonBytes({ text: 'a'.repeat(63) })
    expect(capStructuredContent({ text }, cap).content).toEqual({ text: 'a'.repeat(63) })
    expect(capStructuredContent({ text }, cap + 3).content).toEqual({ text: 'a'.repeat(63) })
    expect(capStructuredContent({ text }, cap + 4).content).toEqual({ text: `${'a'.repeat(63)}😀` })
  })

  it('arrays are emptied only when keeping one item each does not fit', () => {
    const content = { a: ['x'.repeat(40), 'y'], b: ['z'.repeat(40)], pad: 'p'.repeat(2000) }
    expect(capStructuredContent(content, 1024).content).toEqual({ a: ['x'.repeat(40)], b: ['z'.repeat(40)], pad: expect.any(String) as unknown })
    const tight = jsonBytes({ a: [], b: [], pad: 'p'.repeat(64) })
    expect(capStructuredContent(content, tight).content).toEqual({ a: [], b: [], pad: 'p'.repeat(64) })
  })

  it('values nested deeper than 256 are kept whole, and a __proto__ key stays a key', () => {
    let deep: unknown = 'x'.repeat(100)
    for (let i = 0; i < 400; i++) deep = [deep]
    const content = JSON.parse(`{"__proto__":"${'u'.repeat(100)}","deep":${JSON.stringify(deep)},"text":"${'y'.repeat(5000)}"}`) as Record<string, unknown>
    const capped = capStructuredContent(content, 2048).content as Record<string, unknown>
    expect(capped['deep']).toEqual(deep)
    expect(Object.keys(capped)).toEqual(['__proto__', 'deep', 'text'])
    expect(Object.getPrototypeOf(capped)).toBe(Object.prototype)
    expect((capped['text'] as string).length).toBeLessThan(5000)
  })
})

describe('through the SDK Client', () => {
  it('a success whose structured content cannot fit is an FS_TOO_LARGE failure naming the tool, the size and the cap', async () => {
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))
    const tool = {
      name: 'wide',
      description: 'wide',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { title: 'wide', readOnlyHint: true },
      prompt: '',
      structured: { schema: { type: 'object' }, content: () => wide },
      execute: async () => ({ text: 'wide ok', isError: false, value: 1 }),
    } as unknown as FileTool
    const server = createMcpServer({ tools: [tool], maxResultBytes: 1024 })
    const client = new Client({ name: 'cap', version: '0.0.0' })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    try {
      await server.connect(serverSide)
      await client.connect(clientSide)
      await client.listTools()
      const result = (await client.callTool({ name: 'wide', arguments: {} })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(result.structuredContent).toBeUndefined()
      expect(result._meta).toEqual({ [MCP_CODE_META_KEY]: 'FS_TOO_LARGE', [MCP_STRUCTURED_META_KEY]: { omitted: true, bytes: jsonBytes(wide) } })
      const text = result.content[0]?.type === 'text' ? result.content[0].text : ''
      expect(text).toMatch(/^Error: the result of wide is too large/)
      for (const part of [`${jsonBytes(wide)} bytes`, 'maxResultBytes (1024)']) expect(text).toContain(part)
    } finally {
      await client.close()
      await server.close()
    }
  })
})
