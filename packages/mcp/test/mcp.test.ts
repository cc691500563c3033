/**
 * End to end: the SDK's Client starts the MCP server as a REAL child process
 * (test/fixtures/mcp-server.js, over the BUILT packages) and talks to it over
 * stdio; file contents are checked on disk with node:fs after every mutation.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-server.js', import.meta.url))
const PACKAGES = fileURLToPath(new URL('../../', import.meta.url))
// A plain `node` child has no "source" condition: it runs dist/, which `npm test` builds first.
const BUILT = ['core/dist/index.js', 'backend-local/dist/index.js', 'tools/dist/index.js', 'mcp/dist/index.js', 'mcp/dist/mcp.js']
const missing = BUILT.filter((rel) => !existsSync(join(PACKAGES, rel)))
const title =
  missing.length === 0
    ? 'MCP server over stdio in a child process'
    : `MCP server over stdio in a child process — SKIPPED: dist build missing (${missing.join(', ')}); run \`npx tsc -b\``

const NOT_OBSERVED_REMEDY = ' — read the file, then retry'
const STALE_REMEDY = ' — re-read the file, then retry'
/** The SDK's grace before it SIGTERMs a child that did not exit after stdin closed. */
const SDK_GRACE_MS = 2000

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

describe.skipIf(missing.length > 0)(title, () => {
  let root = ''
  let transport: StdioClientTransport
  let client: Client
  let pid: number | undefined
  let stderr = ''

  const disk = (rel: string): string => readFileSync(join(root, rel), 'utf8')

  async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult
  }

  function text(r: CallToolResult): string {
    const [first] = r.content
    if (first?.type !== 'text' || r.content.length !== 1) throw new Error(`expected one text block, got ${JSON.stringify(r.content)}`)
    return first.text
  }

  const code = (r: CallToolResult): unknown => r._meta?.['seamfs/code']

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-mcp-')))
    transport = new StdioClientTransport({ command: process.execPath, args: [FIXTURE, root], stderr: 'pipe' })
    transport.stderr?.on('data', (chunk) => (stderr += String(chunk)))
    client = new Client({ name: 'seamfs-e2e', version: '0.0.0' })
    await client.connect(transport)
    const id = transport.pid
    if (id === null) throw new Error('no child pid')
    pid = id
  })

  afterAll(async () => {
    // Only if a test failed before the close test: never leave the child behind.
    await (client as Client | undefined)?.close().catch(() => undefined)
    if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL')
    if (root !== '') rmSync(root, { recursive: true, force: true })
  })

  it('lists the tools with their annotations', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'seamfs-test' })
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['list', 'read', 'write', 'edit']))
    expect(new Set(names).size).toBe(names.length)
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    for (const name of ['list', 'read']) expect(byName[name]?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    for (const name of ['write', 'edit']) expect(byName[name]?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.description?.length).toBeGreaterThan(0)
      expect(tool.annotations?.title).toBe(tool.title)
    }
    expect(byName['read']?.inputSchema.required).toEqual(['file_path'])
  })

  it('writes a new file, reads it, edits it', async () => {
    const w = await call('write', { file_path: 'notes/a.txt', content: 'alpha\nbeta\n' })
    expect(w.isError).toBe(false)
    expect(text(w)).toBe(`<path>${root}/notes/a.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>`)
    expect(disk('notes/a.txt')).toBe('alpha\nbeta\n')

    const r = await call('read', { file_path: 'notes/a.txt' })
    expect(r.isError).toBe(false)
    expect(text(r)).toContain('1: alpha\n2: beta')

    // No read needed after our own write: the session observed the version it produced.
    const e = await call('edit', { file_path: 'notes/a.txt', old_string: 'beta', new_string: 'gamma' })
    expect(e.isError).toBe(false)
    expect(text(e)).toBe(`The file ${root}/notes/a.txt has been updated successfully.\n\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma`)
    expect(disk('notes/a.txt')).toBe('alpha\ngamma\n')

    const l = await call('list', {})
    expect(text(l)).toContain('notes/')
  })

  it('refuses a blind overwrite of a file made outside the session: FS_NOT_OBSERVED', async () => {
    writeFileSync(join(root, 'outside.txt'), 'made by someone else\n')
    const w = await call('write', { file_path: 'outside.txt', content: 'clobber\n' })
    expect(w.isError).toBe(true)
    expect(code(w)).toBe('FS_NOT_OBSERVED')
    expect(text(w)).toMatch(/^Error: /)
    expect(text(w).endsWith(NOT_OBSERVED_REMEDY)).toBe(true)
    expect(disk('outside.txt')).toBe('made by someone else\n')

    const e = await call('edit', { file_path: 'outside.txt', old_string: 'someone', new_string: 'me' })
    expect(code(e)).toBe('FS_NOT_OBSERVED')
    expect(text(e)).toMatch(/^Error: .* — read the file, then retry$/)
    expect(disk('outside.txt')).toBe('made by someone else\n')
  })

  it('detects a change behind its back: FS_STALE_VERSION, then re-read and write', async () => {
    expect((await call('read', { file_path: 'outside.txt' })).isError).toBe(false)
    writeFileSync(join(root, 'outside.txt'), 'changed behind the server\n')

    const stale = await call('write', { file_path: 'outside.txt', content: 'from the agent\n' })
    expect(stale.isError).toBe(true)
    expect(code(stale)).toBe('FS_STALE_VERSION')
    expect(text(stale)).toMatch(/^Error: /)
    expect(text(stale).endsWith(STALE_REMEDY)).toBe(true)
    expect(disk('outside.txt')).toBe('changed behind the server\n')

    const reread = await call('read', { file_path: 'outside.txt' })
    expect(text(reread)).toContain('1: changed behind the server')
    const w = await call('write', { file_path: 'outside.txt', content: 'from the agent\n' })
    expect(w.isError).toBe(false)
    expect(text(w)).toContain('Updated file')
    expect(disk('outside.txt')).toBe('from the agent\n')
  })

  it('an unknown tool is an isError result and the connection goes on', async () => {
    const r = await call('rm_rf', {})
    expect(r.isError).toBe(true)
    expect(text(r)).toMatch(/^Error: unknown tool "rm_rf"/)
    expect((await client.listTools()).tools.length).toBeGreaterThanOrEqual(4)
  })

  it('closing the client ends the child on its own (no orphan)', async () => {
    if (pid === undefined) throw new Error('no child')
    expect(isAlive(pid)).toBe(true)
    const started = Date.now()
    await client.close()
    const elapsed = Date.now() - started
    expect(isAlive(pid)).toBe(false)
    // It exited because stdin closed (serveStdio resolved, nothing kept it alive), not by the SDK's SIGTERM.
    expect(stderr).toContain('mcp-server: closed')
    expect(elapsed).toBeLessThan(SDK_GRACE_MS)
  })
})
