/**
 * Structured output over MCP: every tool lists an `outputSchema`, and every success carries
 * `structuredContent` that the SDK's own `Client` validates (it compiles the schemas on
 * `listTools`, then checks each `callTool`) and that ajv validates again here. Whole files never
 * travel in it; failures carry none; the result cap holds for it too.
 */
import { Ajv } from 'ajv'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, ObservationPolicy, type FileTool, type ToolsConfig } from '@seamfs/tools'
import { capStructuredContent, createMcpServer, MCP_CODE_META_KEY, MCP_STRUCTURED_META_KEY, toMcpResult, type McpServerOptions } from '@seamfs/mcp'

const CWD = '/w'
const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))
/** A file big enough that carrying it whole would show: 400 numbered lines. */
const BIG = Array.from({ length: 400 }, (_, i) => `line ${i + 1} of the big file, with some words to make it long\n`).join('')
const ALL_TOOLS = ['list', 'read', 'write', 'edit', 'glob', 'grep', 'read_files', 'tree', 'info', 'list_roots', 'create_directory', 'move', 'delete']

const ajv = new Ajv({ allErrors: true })
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined)
})

interface Rig {
  readonly client: Client
  readonly listed: Map<string, Tool>
  readonly fs: MemoryFileSystem
}

async function rig(
  options: { files?: Record<string, string | Uint8Array | null>; config?: Partial<ToolsConfig>; server?: Partial<McpServerOptions> } = {},
): Promise<Rig> {
  const fs = new MemoryFileSystem({ cwd: CWD, files: options.files ?? {} })
  const tools = options.server?.tools ?? createFileTools({ fs, policy: new ObservationPolicy(), config: options.config })
  const server: Server = createMcpServer({ ...options.server, tools })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'test', version: '0.0.0' })
  open.push(server, client)
  await server.connect(serverSide)
  await client.connect(clientSide)
  // listTools is what makes the Client compile each outputSchema and validate every later call.
  const { tools: listed } = await client.listTools()
  return { client, listed: new Map(listed.map((t) => [t.name, t])), fs }
}

async function call(r: Rig, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await r.client.callTool({ name, arguments: args })) as CallToolResult
}

/** Validates `content` against the listed schema of `name` with ajv (apart from the SDK's own check); returns the errors. */
function ajvErrors(r: Rig, name: string, content: unknown): string {
  const schema = r.listed.get(name)?.outputSchema
  if (schema === undefined) return `no outputSchema for ${name}`
  const validate = ajv.compile(schema)
  return validate(content) ? '' : ajv.errorsText(validate.errors)
}

/** A success: not an error, structured content present and valid by ajv; returns it. */
async function success(r: Rig, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await call(r, name, args)
  expect(result.isError, JSON.stringify(result.content)).toBe(false)
  expect(result.structuredContent).toBeDefined()
  expect(ajvErrors(r, name, result.structuredContent)).toBe('')
  return result.structuredContent as Record<string, unknown>
}

describe('outputSchema', () => {
  it('every built-in tool lists its structured schema: an object schema, all members required, nothing else allowed', async () => {
    const fs = new MemoryFileSystem({ cwd: CWD })
    const tools = createFileTools({ fs })
    expect(tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort())
    const r = await rig()
    for (const tool of tools) {
      expect(tool.structured, tool.name).toBeDefined()
      const listed = r.listed.get(tool.name)?.outputSchema
      expect(listed, tool.name).toEqual(tool.structured?.schema)
      expect(listed).toMatchObject({ type: 'object', additionalProperties: false })
      expect(() => ajv.compile(listed ?? {})).not.toThrow()
    }
  })

  it('a host tool without structured output lists no outputSchema and returns no structuredContent', async () => {
    const plain: FileTool = {
      name: 'plain',
      description: 'no structure',
      inputSchema: { type: 'object' },
      annotations: { title: 'plain', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      prompt: '',
      execute: async () => ({ text: 'ok', isError: false, value: { any: 1 } }),
    }
    const r = await rig({ server: { tools: [plain] } })
    expect(r.listed.get('plain')?.outputSchema).toBeUndefined()
    expect((await call(r, 'plain', {})).structuredContent).toBeUndefined()
  })
})

describe('structuredContent of a real call, for every tool', () => {
  it('validates against the listed schema (the Client checks, ajv checks) and says what the text says', async () => {
    const r = await rig({ files: { 'a.txt': 'hello\nworld\n', 'p.png': PNG, 'src/x.ts': 'const hello = 1\n' } })
    const called = new Set<string>()
    const ok = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      called.add(name)
      return success(r, name, args)
    }
    expect(await ok('list', {})).toEqual({
      path: CWD,
      offset: 1,
      entries: [
        { name: 'src', type: 'directory' },
        { name: 'a.txt', type: 'file' },
        { name: 'p.png', type: 'file' },
      ],
      totalEntries: 3,
      counts: { directories: 1, files: 2, other: 0 },
    })
    expect(await ok('read', { file_path: 'a.txt', offset: 2 })).toEqual({
      path: `${CWD}/a.txt`,
      offset: 2,
      lines: [{ number: 2, text: 'world' }],
      totalLines: 2,
    })
    expect(await ok('read', { file_path: 'p.png' })).toEqual({
      path: `${CWD}/p.png`,
      offset: 1,
      lines: [],
      totalLines: 0,
      image: { mimeType: 'image/png', size: PNG.length },
    })
    expect(await ok('write', { file_path: 'n.txt', content: 'new\n' })).toEqual({ path: `${CWD}/n.txt`, operation: 'create', diff: null, dryRun: false })
    const updated = await ok('write', { file_path: 'a.txt', content: 'hello\nthere\n' })
    expect(updated).toMatchObject({ path: `${CWD}/a.txt`, operation: 'update', dryRun: false })
    expect(updated['diff']).toMatch(/-world\n\+there/)
    const edited = await ok('edit', { file_path: 'a.txt', old_string: 'there', new_string: 'you' })
    expect(edited).toMatchObject({ path: `${CWD}/a.txt`, dryRun: false })
    expect(edited['diff']).toMatch(/-there\n\+you/)
    expect(await ok('edit', { file_path: 'a.txt', old_string: 'you', new_string: 'me', dryRun: true })).toMatchObject({ dryRun: true })
    expect(await ok('glob', { pattern: '*.ts' })).toEqual({ root: CWD, pattern: '*.ts', paths: ['src/x.ts'], totalPaths: 1, fencedDirs: 0, fencedPaths: [] })
    expect(await ok('grep', { pattern: 'hello' })).toEqual({
      root: CWD,
      pattern: 'hello',
      matches: [
        { path: 'a.txt', line: 1, text: 'hello' },
        { path: 'src/x.ts', line: 1, text: 'const hello = 1' },
      ],
      totalMatches: 2,
      skippedFiles: 1,
      fencedEntries: 0,
      skippedPaths: ['p.png'],
      fencedPaths: [],
    })
    expect(await ok('read_files', { file_paths: ['src/x.ts', 'nope'] })).toMatchObject({
      files: [{ file_path: 'src/x.ts', totalLines: 1 }, { code: 'FS_NOT_FOUND' }],
      failed: 1,
    })
    expect(await ok('tree', { path: 'src' })).toMatchObject({ path: `${CWD}/src`, entries: [{ path: 'x.ts', type: 'file', depth: 1, state: null, hidden: 0 }] })
    expect(await ok('info', { path: 'src/x.ts' })).toMatchObject({ path: `${CWD}/src/x.ts`, type: 'file', size: 16, link: null })
    expect(await ok('list_roots', {})).toMatchObject({ sandboxed: true, roots: [{ path: CWD, workspace: true }] })
    expect(await ok('create_directory', { path: 'd' })).toEqual({ path: `${CWD}/d`, created: true })
    expect(await ok('move', { source_path: 'a.txt', destination_path: 'd/b.txt' })).toEqual({
      from: `${CWD}/a.txt`,
      to: `${CWD}/d/b.txt`,
      type: 'file',
      replaced: false,
    })
    expect(await ok('delete', { path: 'd/b.txt' })).toEqual({ path: `${CWD}/d/b.txt`, type: 'file' })
    expect([...called].sort()).toEqual([...ALL_TOOLS].sort())
  })

  it('write and edit never carry the file: no before/after, only the bounded diff', async () => {
    const r = await rig({ files: { 'big.txt': BIG } })
    await success(r, 'read', { file_path: 'big.txt' })
    const results = [
      await success(r, 'edit', { file_path: 'big.txt', old_string: 'line 200 of', new_string: 'LINE 200 OF' }),
      await success(r, 'edit', { file_path: 'big.txt', old_string: 'line 300 of', new_string: 'x', dryRun: true }),
      await success(r, 'write', { file_path: 'big.txt', content: BIG.replace('line 100 of', 'LINE 100 OF') }),
      await success(r, 'write', { file_path: 'big.txt', content: `${BIG}tail\n`, dryRun: true }),
      await success(r, 'write', { file_path: 'fresh.txt', content: BIG }),
    ]
    for (const content of results) {
      expect(Object.keys(content)).not.toContain('before')
      expect(Object.keys(content)).not.toContain('after')
      const json = JSON.stringify(content)
      expect(json).not.toContain('line 1 of the big file')
      expect(json.length).toBeLessThan(BIG.length / 4)
    }
  })
})

describe('failures', () => {
  it('an error result has isError, the code meta and no structuredContent, and the Client accepts it', async () => {
    const r = await rig({ files: { 'a.txt': 'one\n' } })
    const blind = await call(r, 'edit', { file_path: 'a.txt', old_string: 'one', new_string: 'two' })
    expect(blind.isError).toBe(true)
    expect(blind._meta?.[MCP_CODE_META_KEY]).toBe('FS_NOT_OBSERVED')
    expect(blind.structuredContent).toBeUndefined()
    await success(r, 'read', { file_path: 'a.txt' })
    await r.fs.writeText(await r.fs.resolve('a.txt'), 'changed behind the agent\n')
    const stale = await call(r, 'edit', { file_path: 'a.txt', old_string: 'one', new_string: 'two' })
    expect(stale).toMatchObject({ isError: true, _meta: { [MCP_CODE_META_KEY]: 'FS_STALE_VERSION' } })
    expect(stale.structuredContent).toBeUndefined()
    const input = await call(r, 'read', {})
    expect(input.isError).toBe(true)
    expect(input.structuredContent).toBeUndefined()
  })

  it('the Client really validates: a host tool whose content breaks its schema is rejected', async () => {
    const liar: FileTool<{ n: string }> = {
      name: 'liar',
      description: 'says n is a number',
      inputSchema: { type: 'object' },
      annotations: { title: 'liar', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      prompt: '',
      structured: { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, content: (v) => ({ n: v.n }) },
      execute: async () => ({ text: 'ok', isError: false, value: { n: 'not a number' } }),
    }
    const r = await rig({ server: { tools: [liar] } })
    await expect(call(r, 'liar', {})).rejects.toThrow(/output schema/)
  })
})

describe('the result cap holds for structured content', () => {
  const CAP = 2048
  const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))

  it('read, grep, glob and list over the cap: shrunk to fit, still valid, and _meta says so', async () => {
    const files: Record<string, string> = { 'big.txt': BIG }
    for (let i = 0; i < 60; i++) files[`many/file-${String(i).padStart(2, '0')}-with-a-long-name.txt`] = 'needle\n'
    const r = await rig({ files, server: { maxResultBytes: CAP } })
    const cases: Array<[string, Record<string, unknown>]> = [
      ['read', { file_path: 'big.txt' }],
      ['grep', { pattern: 'needle|line' }],
      ['glob', { pattern: '**/*.txt' }],
      ['list', { path: 'many' }],
    ]
    for (const [name, args] of cases) {
      const result = await call(r, name, args)
      expect(result.isError, name).toBe(false)
      expect(jsonBytes(result.structuredContent), name).toBeLessThanOrEqual(CAP)
      expect(ajvErrors(r, name, result.structuredContent), name).toBe('')
      const note = result._meta?.[MCP_STRUCTURED_META_KEY] as { truncated?: boolean; bytes?: number } | undefined
      expect(note?.truncated, name).toBe(true)
      expect(note?.bytes, name).toBeGreaterThan(CAP)
      const text = result.content[0]
      expect(text?.type === 'text' && Buffer.byteLength(text.text) <= CAP, name).toBe(true)
    }
  })

  it('one long line is cut, not dropped: the window keeps its line, its text shortened on a character boundary', async () => {
    const line = '€'.repeat(5000)
    const r = await rig({ files: { 'wide.txt': `${line}\n` }, config: { readMaxLineLength: 10_000 }, server: { maxResultBytes: CAP } })
    const result = await call(r, 'read', { file_path: 'wide.txt' })
    const content = result.structuredContent as { lines: Array<{ number: number; text: string }>; totalLines: number }
    expect(jsonBytes(content)).toBeLessThanOrEqual(CAP)
    expect(content.totalLines).toBe(1)
    expect(content.lines).toHaveLength(1)
    expect(content.lines[0]?.number).toBe(1)
    expect(line.startsWith(content.lines[0]?.text ?? 'x')).toBe(true)
    expect(content.lines[0]?.text.length).toBeGreaterThan(100)
  })

  it('under the cap the content is sent as is, with no note', async () => {
    const r = await rig({ files: { 'a.txt': 'hi\n' }, server: { maxResultBytes: CAP } })
    const result = await call(r, 'read', { file_path: 'a.txt' })
    expect(result.structuredContent).toEqual({ path: `${CWD}/a.txt`, offset: 1, lines: [{ number: 1, text: 'hi' }], totalLines: 1 })
    expect(result._meta).toBeUndefined()
  })

  it('capStructuredContent: any size fits after capping, or is left out when nothing can shrink', () => {
    for (let n = 0; n <= 400; n += 37) {
      const content = { items: Array.from({ length: n }, (_, i) => ({ i, text: `entry ${i} ${'x'.repeat(i % 90)}` })), note: 'y'.repeat(n * 7), total: n }
      const capped = capStructuredContent(content, 1024)
      expect(capped.content).toBeDefined()
      expect(jsonBytes(capped.content)).toBeLessThanOrEqual(1024)
      expect(capped.content?.['total']).toBe(n)
      expect(capped.overBytes === undefined).toBe(jsonBytes(content) <= 1024)
    }
    // Two thousand short keys: nothing to halve, so it cannot fit; the result says so.
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))
    expect(capStructuredContent(wide, 1024)).toEqual({ content: undefined, overBytes: jsonBytes(wide) })
    const structured = { schema: { type: 'object' }, content: () => wide }
    // The success becomes an FS_TOO_LARGE failure: the SDK Client rejects a success without structuredContent.
    const result = toMcpResult({ text: 'ok', isError: false, value: 1 }, 1024, structured, 'wide')
    expect(result.structuredContent).toBeUndefined()
    expect(result.isError).toBe(true)
    expect(result._meta).toEqual({ [MCP_CODE_META_KEY]: 'FS_TOO_LARGE', [MCP_STRUCTURED_META_KEY]: { omitted: true, bytes: jsonBytes(wide) } })
    const text = result.content[0]?.type === 'text' ? result.content[0].text : ''
    for (const part of ['wide', `${jsonBytes(wide)} bytes`, 'maxResultBytes (1024)']) expect(text).toContain(part)
    // A failure never gets structured content, whatever the tool declares.
    expect(toMcpResult({ text: 'Error: x', isError: true, code: 'FS_IO_ERROR' }, 1024, structured).structuredContent).toBeUndefined()
  })
})
