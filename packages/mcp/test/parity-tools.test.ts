/**
 * The tools next to the reference filesystem server's — `read_files`, `tree`, `info`, `list` with
 * `details`, `list_roots` — driven through the real MCP SDK `Client` over its in-memory transport:
 * each is listed with its `outputSchema` and read-only annotations, each success carries
 * `structuredContent` that the Client validates and ajv validates again, a read through
 * `read_files` lets a later `edit` through, and the fence holds (a path outside is refused, a link
 * out is never followed, the client's roots are the roots `list_roots` names).
 */
import { Ajv } from 'ajv'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ListRootsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { SandboxedFileSystem } from '@seamfs/core'
import { createFileTools, ObservationPolicy, type FileTool } from '@seamfs/tools'
import { createMcpServer, MCP_CODE_META_KEY, type McpRoot } from '@seamfs/mcp'

const PARITY_TOOLS = ['read_files', 'tree', 'info', 'list_roots']
const FILES = {
  '/w/a.txt': 'alpha\nbeta\n',
  '/w/src/index.ts': 'export const x = 1\n',
  '/w/src/lib/util.ts': 'export const y = 2\n',
  '/w/docs/': null,
  '/w/out': { symlink: '/elsewhere' },
  '/elsewhere/secret.txt': 'secret\n',
  '/shared/notes.md': '# notes\n',
}

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

/** A server over a memory store fenced to /w (and /shared writable), and a connected client; `roots` makes the client list roots. */
async function rig(roots?: readonly string[]): Promise<Rig> {
  const fs = new MemoryFileSystem({ cwd: '/w', files: FILES })
  const fenced = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: '/w', writableRoots: ['/shared'] })
  const policy = new ObservationPolicy()
  const within = (listed: readonly McpRoot[]): FileTool[] => {
    const [workspaceRoot, ...writableRoots] = listed.map((r) => r.path)
    return createFileTools({ fs: new SandboxedFileSystem(fenced, { mode: 'workspace-write', workspaceRoot: workspaceRoot ?? '/w', writableRoots }), policy })
  }
  const server = createMcpServer({ tools: createFileTools({ fs: fenced, policy }), ...(roots === undefined ? {} : { roots: { within } }) })
  const client = new Client({ name: 'parity-test', version: '0.0.0' }, roots === undefined ? {} : { capabilities: { roots: { listChanged: true } } })
  if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((path) => ({ uri: `file://${path}` })) }))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  open.push(server, client)
  await server.connect(serverSide)
  await client.connect(clientSide)
  // listTools is what makes the Client compile each outputSchema and validate every later call.
  const { tools } = await client.listTools()
  return { client, listed: new Map(tools.map((t) => [t.name, t])), fs }
}

async function call(r: Rig, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await r.client.callTool({ name, arguments: args })) as CallToolResult
}

const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '')

/** A success: its structuredContent validates (the Client checked it; ajv checks again); returns it with the text. */
async function success(r: Rig, name: string, args: Record<string, unknown>): Promise<{ content: Record<string, unknown>; text: string }> {
  const result = await call(r, name, args)
  expect(result.isError, textOf(result)).toBe(false)
  const schema = r.listed.get(name)?.outputSchema
  expect(schema, name).toBeDefined()
  const validate = ajv.compile(schema ?? {})
  expect(validate(result.structuredContent), ajv.errorsText(validate.errors)).toBe(true)
  return { content: result.structuredContent as Record<string, unknown>, text: textOf(result) }
}

describe('the parity tools over MCP', () => {
  it('are listed read-only, with a strict input schema and an object outputSchema that compiles', async () => {
    const r = await rig()
    for (const name of PARITY_TOOLS) {
      const tool = r.listed.get(name)
      expect(tool, name).toBeDefined()
      expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
      expect(tool?.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(tool?.outputSchema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(() => ajv.compile(tool?.outputSchema ?? {})).not.toThrow()
    }
    expect(r.listed.get('list')?.inputSchema['properties']).toHaveProperty('details')
  })

  it('read_files: each file in its place, a failure in its own; the reads count for a later edit', async () => {
    const r = await rig()
    const blind = await call(r, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' })
    expect(blind._meta?.[MCP_CODE_META_KEY]).toBe('FS_NOT_OBSERVED')
    const { content, text } = await success(r, 'read_files', { file_paths: ['a.txt', 'missing.txt', 'out/secret.txt', 'src/index.ts'] })
    expect(text).toContain('<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n')
    expect(text).not.toContain('1: secret')
    expect(text.endsWith('(4 files: 2 read, 2 failed)')).toBe(true)
    expect(content['failed']).toBe(2)
    expect((content['files'] as Array<Record<string, unknown>>).map((f) => f['code'] ?? 'read')).toEqual(['read', 'FS_NOT_FOUND', 'FS_SANDBOX_DENIED', 'read'])
    expect(await success(r, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' })).toMatchObject({ content: { path: '/w/a.txt' } })
    expect(await r.fs.readText(await r.fs.resolve('/w/a.txt'))).toBe('ALPHA\nbeta\n')
  })

  it('tree: indented, the link out shown as other and never followed; a path outside is refused', async () => {
    const r = await rig()
    const { content, text } = await success(r, 'tree', {})
    expect(text).toBe(
      '<path>/w</path>\n<type>directory</type>\n<content>\ndocs/\nsrc/\n  lib/\n    util.ts\n  index.ts\na.txt\nout@\n\n(7 entries: 3 directories, 3 files, 1 other)\n</content>',
    )
    expect(content).toMatchObject({ path: '/w', depth: 3, complete: true, counts: { directories: 3, files: 3, other: 1 } })
    expect(text).not.toContain('secret')
    for (const path of ['/elsewhere', 'out', '..']) {
      const denied = await call(r, 'tree', { path })
      expect(denied.isError, path).toBe(true)
      expect(denied._meta?.[MCP_CODE_META_KEY]).toBe('FS_SANDBOX_DENIED')
      expect(denied.structuredContent).toBeUndefined()
    }
  })

  it('info and list with details: sizes and ISO times; a missing path is FS_NOT_FOUND', async () => {
    const r = await rig()
    const { content } = await success(r, 'info', { path: 'a.txt' })
    expect(content).toMatchObject({ path: '/w/a.txt', type: 'file', size: 11, link: null })
    expect(content['modified']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(await success(r, 'info', { path: 'out' })).toMatchObject({ content: { type: 'symlink', link: { type: 'outside' } } })
    const missing = await call(r, 'info', { path: 'nope' })
    expect(missing).toMatchObject({ isError: true, _meta: { [MCP_CODE_META_KEY]: 'FS_NOT_FOUND' } })
    const listed = await success(r, 'list', { details: true })
    expect(listed.content['entries']).toEqual([
      { name: 'docs', type: 'directory', size: null, modified: expect.stringMatching(/Z$/) as unknown },
      { name: 'src', type: 'directory', size: null, modified: expect.stringMatching(/Z$/) as unknown },
      { name: 'a.txt', type: 'file', size: 11, modified: expect.stringMatching(/Z$/) as unknown },
      { name: 'out', type: 'other', size: null, modified: null },
    ])
    const docsTime = (listed.content['entries'] as Array<{ modified: string }>)[0]?.modified.replace(/\.\d{3}Z$/, 'Z')
    expect(listed.text).toContain(`<content>\n -  ${docsTime}  docs/\n`)
  })

  it("list_roots: the server's fence, or the client's roots where it lists them", async () => {
    const served = await success(await rig(), 'list_roots', {})
    expect(served.content).toEqual({
      sandboxed: true,
      mode: 'workspace-write',
      confineReads: true,
      cwd: '/w',
      roots: [
        { path: '/w', workspace: true, writable: true, found: true },
        { path: '/shared', workspace: false, writable: true, found: true },
      ],
    })
    expect(served.text).toContain('Roots:\n/w (workspace)\n/shared')
    const narrowed = await success(await rig(['/w/src']), 'list_roots', {})
    expect(narrowed.content).toMatchObject({ cwd: '/w/src', roots: [{ path: '/w/src', workspace: true, found: true }] })
  })
})
