/**
 * Attacks on structured content over MCP: tools whose values are huge, deep, cyclic
 * or not JSON, under a small `maxResultBytes`, through the SDK's own `Client` (which validates
 * every `structuredContent` against the listed `outputSchema`). The cap must end quickly, keep
 * under the cap, keep the schema valid and never make the Client reject a success.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { FileTool, JsonSchema } from '@seamfs/tools'
import { capStructuredContent, createMcpServer, MCP_STRUCTURED_META_KEY } from '@seamfs/mcp'

const CAP = 1024
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

/** A tool that answers `value` with `content` as its structured content under `schema`. */
function customTool(name: string, schema: JsonSchema, content: () => Record<string, unknown>): FileTool {
  return {
    name,
    description: `custom ${name}`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { title: name, readOnlyHint: true },
    prompt: '',
    structured: { schema, content },
    execute: async () => ({ text: `${name} ok`, isError: false, value: 1 }),
  } as unknown as FileTool
}

async function client(tools: FileTool[], maxResultBytes = CAP): Promise<Client> {
  const server = createMcpServer({ tools, maxResultBytes })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const c = new Client({ name: 'attacks', version: '0.0.0' })
  open.push(server, c)
  await server.connect(serverSide)
  await c.connect(clientSide)
  await c.listTools()
  return c
}

const call = async (c: Client, name: string): Promise<CallToolResult> => (await c.callTool({ name, arguments: {} })) as CallToolResult

const ITEMS = { type: 'array', items: { type: 'string' } } as const

describe('capStructuredContent against hostile values', () => {
  it('a huge array, a huge string and a wide array of long strings end fast and under the cap', () => {
    const cases: Array<Record<string, unknown>> = [
      { items: Array.from({ length: 1_000_000 }, (_, i) => i) },
      { text: 'x'.repeat(5_000_000) },
      { items: Array.from({ length: 50_000 }, (_, i) => `${i} ${'y'.repeat(100)}`) },
      { nested: Array.from({ length: 2000 }, () => Array.from({ length: 20 }, () => 'z'.repeat(80))) },
    ]
    for (const content of cases) {
      const capped = capStructuredContent(content, CAP)
      expect(capped.content, Object.keys(content)[0]).toBeDefined()
      expect(jsonBytes(capped.content)).toBeLessThanOrEqual(CAP)
      expect(Object.keys(capped.content ?? {})).toEqual(Object.keys(content))
    }
  })

  it('exactly at the cap the content is untouched; one byte over it is shrunk to fit', () => {
    const base = { text: '' }
    const room = CAP - jsonBytes(base)
    const exact = { text: 'a'.repeat(room) }
    expect(jsonBytes(exact)).toBe(CAP)
    expect(capStructuredContent(exact, CAP)).toEqual({ content: exact })
    const over = { text: 'a'.repeat(room + 1) }
    const capped = capStructuredContent(over, CAP)
    expect(capped.overBytes).toBe(CAP + 1)
    expect(jsonBytes(capped.content)).toBeLessThanOrEqual(CAP)
    expect(over.text.startsWith((capped.content as { text: string }).text)).toBe(true)
  })

  it('multi-byte text is never cut inside a character or a surrogate pair, whatever the cap', () => {
    const alphabets = ['😀', '€', 'é', 'a😀', '𝄞€x', '\u0301e']
    for (const letters of alphabets) {
      for (let cap = CAP; cap < CAP + 64; cap += 7) {
        const content = { text: letters.repeat(3000), list: [letters.repeat(500), letters.repeat(700)] }
        const capped = capStructuredContent(content, cap).content as { text: string; list: string[] }
        expect(jsonBytes(capped)).toBeLessThanOrEqual(cap)
        for (const s of [capped.text, ...capped.list]) {
          expect(LONE_SURROGATE.test(s), `${letters} @${cap}`).toBe(false)
          expect(s.includes('\uFFFD')).toBe(false)
        }
      }
    }
  })

  it('strings that JSON escapes (quotes, controls, lone surrogates) are measured as JSON, so the result stays under the cap', () => {
    for (const unit of ['"', '\\', '\n', '\u0001', '\uD800', '\u2028']) {
      const content = { text: unit.repeat(10_000), items: Array.from({ length: 50 }, () => unit.repeat(200)) }
      const capped = capStructuredContent(content, CAP)
      expect(capped.content, JSON.stringify(unit)).toBeDefined()
      expect(jsonBytes(capped.content)).toBeLessThanOrEqual(CAP)
    }
  })

  it('many arrays that each need halving still fit when they can (more arrays than the step budget)', () => {
    // 300 members, each two long strings: keeping one 64-character start of each fits in 64 KiB.
    const content = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, ['a'.repeat(1000), 'b'.repeat(1000)]]))
    const minimal = Object.fromEntries(Object.keys(content).map((k) => [k, ['a'.repeat(64)]]))
    const cap = 64 * 1024
    expect(jsonBytes(minimal)).toBeLessThan(cap)
    const capped = capStructuredContent(content, cap)
    expect(capped.content, 'left out although it could be shrunk to fit').toBeDefined()
    expect(jsonBytes(capped.content)).toBeLessThanOrEqual(cap)
  })

  it('a 3 MB value of many equal members ends in bounded time', () => {
    const content = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, Array.from({ length: 10 }, () => 'q'.repeat(1000))]))
    const capped = capStructuredContent(content, 256 * 1024)
    expect(capped.content).toBeDefined()
    expect(jsonBytes(capped.content)).toBeLessThanOrEqual(256 * 1024)
  })

  it('deep nesting, a cycle and values that are not JSON fail as a thrown error or a fit, never a hang', () => {
    let deep: unknown = 'leaf'.repeat(100)
    for (let i = 0; i < 3000; i++) deep = [deep, 'x'.repeat(70)]
    const cyclic: Record<string, unknown> = { a: 'x'.repeat(5000) }
    cyclic['self'] = cyclic
    const cases: Array<Record<string, unknown>> = [{ deep }, cyclic, { n: 10n, s: 'x'.repeat(5000) }, { f: () => 1, u: undefined, s: 'x'.repeat(5000) }]
    for (const content of cases) {
      let capped: ReturnType<typeof capStructuredContent> | undefined
      try {
        capped = capStructuredContent(content, CAP)
      } catch (err) {
        expect(err).toBeInstanceOf(Error)
      }
      if (capped?.content !== undefined) expect(jsonBytes(capped.content)).toBeLessThanOrEqual(CAP)
    }
  })
})

describe('structured content through the SDK Client', () => {
  it('the Client accepts every success: values that are huge, cyclic, deep or not JSON never make callTool throw', async () => {
    const cyclic: Record<string, unknown> = { items: ['x'] }
    cyclic['self'] = cyclic
    let deep: unknown = []
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const tools = [
      customTool('huge', { type: 'object', properties: { items: ITEMS }, required: ['items'] }, () => ({
        items: Array.from({ length: 100_000 }, (_, i) => `item ${i} ${'w'.repeat(90)}`),
      })),
      customTool('cyclic', { type: 'object' }, () => cyclic),
      customTool('bigint', { type: 'object' }, () => ({ n: 1n })),
      customTool('deep', { type: 'object' }, () => ({ deep })),
      customTool('throws', { type: 'object' }, () => {
        throw 'not an error' // eslint-disable-line @typescript-eslint/only-throw-error
      }),
    ]
    const c = await client(tools)
    for (const tool of tools) {
      const result = await call(c, tool.name)
      expect(Buffer.byteLength(JSON.stringify(result.content)), tool.name).toBeLessThanOrEqual(CAP + 64)
      if (result.structuredContent !== undefined) expect(jsonBytes(result.structuredContent), tool.name).toBeLessThanOrEqual(CAP)
    }
    const huge = await call(c, 'huge')
    expect(huge.isError).toBe(false)
    expect(huge._meta?.[MCP_STRUCTURED_META_KEY]).toMatchObject({ truncated: true })
  })

  it('a success whose structured content cannot be shrunk to fit is still a result the Client accepts', async () => {
    // Two thousand short members: nothing to halve. The server leaves structuredContent out; the
    // SDK Client rejects a success without it from a tool with an outputSchema.
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))
    const c = await client([customTool('wide', { type: 'object' }, () => wide)])
    const result = await call(c, 'wide').catch((err: unknown) => err)
    expect(result, 'callTool threw on an over-cap success').not.toBeInstanceOf(Error)
  })

  it('keys kept by the cap keep the schema valid: required short members, enums and integers survive a deep cut', async () => {
    const schema = {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['alpha', 'beta'] },
        total: { type: 'integer', minimum: 0 },
        rows: {
          type: 'array',
          items: { type: 'object', properties: { n: { type: 'integer' }, text: { type: 'string' } }, required: ['n', 'text'], additionalProperties: false },
        },
      },
      required: ['kind', 'total', 'rows'],
      additionalProperties: false,
    }
    const content = { kind: 'beta', total: 5000, rows: Array.from({ length: 5000 }, (_, n) => ({ n, text: `${'€'.repeat(n % 300)}` })) }
    const c = await client([customTool('rows', schema, () => content)])
    const result = await call(c, 'rows')
    expect(result.isError).toBe(false)
    const got = result.structuredContent as typeof content
    expect(got.kind).toBe('beta')
    expect(got.total).toBe(5000)
    expect(jsonBytes(got)).toBeLessThanOrEqual(CAP)
  })
})
