/**
 * The tools next to the reference MCP filesystem server's: `read_files` (several files, each as
 * `read` gives it, each read recorded as `read` records it), `info` (stat and lstat of one path),
 * `list` with `details` (sizes and times) and `list_roots` (the fence's roots), on the memory and
 * the local backend, behind the default fence; every success's structured content validated
 * against its schema. `tree` has its own file.
 */
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { afterEach, describe, expect, it } from 'vitest'
import { SandboxedFileSystem } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, ObservationPolicy, type FileTool, type ReadFilesValue, type ToolResult } from '@seamfs/tools'
import { BACKENDS, expectOk, makeHarness, type BackendKind, type Harness, type HarnessOptions } from './tool-harness.js'

const validator = new AjvJsonSchemaValidator()
const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))

/** A success whose structured content validates against the tool's schema; returns the content. */
function structured(tool: FileTool | undefined, result: ToolResult): Record<string, unknown> {
  expect(result.isError, result.text).toBe(false)
  if (tool?.structured === undefined) throw new Error('no structured output')
  const content = tool.structured.content(result.value)
  const verdict = validator.getValidator(tool.structured.schema)(content)
  expect(verdict.errorMessage, JSON.stringify(content)).toBeUndefined()
  expect(JSON.parse(JSON.stringify(content))).toEqual(content)
  return content
}

describe.each(BACKENDS)('on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  const outside: string[] = []
  afterEach(() => {
    harness?.dispose()
    harness = undefined
    for (const dir of outside.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const setup = (options: HarnessOptions = {}): Harness => (harness = makeHarness(kind, { policy: new ObservationPolicy(), ...options }))
  /** A directory outside the workspace holding `secret.txt`, linked from the workspace as `out`. */
  const linkOut = (h: Harness): void => {
    if (kind === 'memory') {
      const fs = h.fs as MemoryFileSystem
      fs.volume.mkdirSync('/elsewhere', { recursive: true })
      fs.volume.writeFileSync('/elsewhere/secret.txt', 'secret\n')
      h.seed('out', { symlink: '/elsewhere' })
    } else {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-outside-')))
      outside.push(dir)
      writeFileSync(join(dir, 'secret.txt'), 'secret\n')
      symlinkSync(dir, join(h.cwd, 'out'))
    }
  }
  const call = async (h: Harness, name: string, args: unknown): Promise<ToolResult> => h.call(name, args)

  describe('read_files', () => {
    it('gives each file as read gives it, in the order named, with a footer', async () => {
      const h = setup({ files: { 'a.txt': 'one\ntwo\n', 'src/b.ts': 'export const b = 1\n' } })
      const result = await call(h, 'read_files', { file_paths: ['src/b.ts', 'a.txt'] })
      const readB = expectOk(await call(h, 'read', { file_path: 'src/b.ts' }))
      const readA = expectOk(await call(h, 'read', { file_path: 'a.txt' }))
      expect(expectOk(result)).toBe(`${readB}\n\n${readA}\n\n(2 files: 2 read)`)
      const content = structured(h.tools['read_files'], result)
      expect(content).toEqual({
        files: [
          { file_path: 'src/b.ts', path: h.abs('src/b.ts'), offset: 1, lines: [{ number: 1, text: 'export const b = 1' }], totalLines: 1 },
          {
            file_path: 'a.txt',
            path: h.abs('a.txt'),
            offset: 1,
            lines: [
              { number: 1, text: 'one' },
              { number: 2, text: 'two' },
            ],
            totalLines: 2,
          },
        ],
        failed: 0,
      })
    })

    it('reports a failure in its place and reads the others; the call succeeds', async () => {
      const h = setup({ files: { 'a.txt': 'one\n', dir: null } })
      linkOut(h)
      const result = await call(h, 'read_files', { file_paths: ['missing.txt', 'a.txt', 'dir', 'out/secret.txt', '../x.txt'] })
      const text = expectOk(result)
      expect(text).toContain(`<path>missing.txt</path>\n<type>error</type>\n<content>\nError: cannot read "${h.abs('missing.txt')}": not found\n</content>`)
      expect(text).toContain(`<path>dir</path>\n<type>error</type>\n<content>\nError: cannot read "${h.abs('dir')}": not a regular file`)
      expect(text).toContain(expectOk(await call(h, 'read', { file_path: 'a.txt' })))
      expect(text).not.toContain('1: secret')
      expect(text.endsWith('\n\n(5 files: 1 read, 4 failed)')).toBe(true)
      const value = result.value as ReadFilesValue
      expect(value.files.map((f) => f.error?.code ?? 'ok')).toEqual(['FS_NOT_FOUND', 'ok', 'FS_NOT_REGULAR_FILE', 'FS_SANDBOX_DENIED', 'FS_SANDBOX_DENIED'])
      const content = structured(h.tools['read_files'], result)
      expect((content['files'] as unknown[])[0]).toEqual({
        file_path: 'missing.txt',
        error: `Error: cannot read "${h.abs('missing.txt')}": not found`,
        code: 'FS_NOT_FOUND',
      })
    })

    it('records each read in the policy as read does: an edit afterwards works; a change behind it is stale', async () => {
      const h = setup({ files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n' } })
      expect((await call(h, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' })).code).toBe('FS_NOT_OBSERVED')
      expectOk(await call(h, 'read_files', { file_paths: ['a.txt', 'b.txt', 'nothing-yet.txt'] }))
      expectOk(await call(h, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' }))
      expectOk(await call(h, 'write', { file_path: 'b.txt', content: 'BETA\n' }))
      // Seen absent, as read records it: creating it needs no further read.
      expectOk(await call(h, 'write', { file_path: 'nothing-yet.txt', content: 'new\n' }))
      expect(h.peek('a.txt')).toBe('ALPHA\n')
      expect(h.peek('b.txt')).toBe('BETA\n')
      // Not named: not observed.
      expect((await call(h, 'edit', { file_path: 'c.txt', old_string: 'gamma', new_string: 'x' })).code).toBe('FS_NOT_OBSERVED')
      expectOk(await call(h, 'read_files', { file_paths: ['c.txt'] }))
      h.put('c.txt', 'changed behind the agent\n')
      expect((await call(h, 'edit', { file_path: 'c.txt', old_string: 'changed', new_string: 'x' })).code).toBe('FS_STALE_VERSION')
    })

    it('applies limit to each file, and shares one byte budget (2 × readMaxBytes) across the files', async () => {
      const line = (i: number): string => `line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}\n`
      const big = Array.from({ length: 50 }, (_, i) => line(i + 1)).join('')
      const h = setup({ files: { 'a.txt': big, 'b.txt': big, 'c.txt': big, 'small.txt': 'tiny\n' }, config: { readMaxBytes: 600 } })
      const limited = (await call(h, 'read_files', { file_paths: ['a.txt', 'b.txt'], limit: 2 })).value as ReadFilesValue
      expect(limited.files.map((f) => f.value?.lines.length)).toEqual([2, 2])
      const result = await call(h, 'read_files', { file_paths: ['small.txt', 'a.txt', 'b.txt', 'c.txt'] })
      const value = result.value as ReadFilesValue
      const bytes = value.files.map((f) => Buffer.byteLength((f.value?.lines ?? []).map((l) => `${l.text}\n`).join('')))
      // Every file gets at most readMaxBytes, and at most its share of what the files before it left.
      for (const b of bytes) expect(b).toBeLessThanOrEqual(600)
      expect(bytes.reduce((n, b) => n + b, 0)).toBeLessThanOrEqual(1200 + 3)
      expect(value.files[0]?.value?.lines).toEqual([{ number: 1, text: 'tiny' }])
      expect(expectOk(result)).toContain('(Output capped. Showing lines 1-')
      structured(h.tools['read_files'], result)
    })

    it('describes an image rather than returning it (one result holds one image)', async () => {
      const h = setup({ files: { 'a.txt': 'one\n' } })
      await h.fs.writeBytes(await h.fs.resolve('p.png'), PNG)
      const result = await call(h, 'read_files', { file_paths: ['p.png', 'a.txt'] })
      expect(result.image).toBeUndefined()
      expect(expectOk(result)).toContain(
        `<path>${h.abs('p.png')}</path>\n<type>image</type>\n<content>\n(image/png, ${PNG.length} bytes; not shown here: use the read tool to see the image)\n</content>`,
      )
      expect(structured(h.tools['read_files'], result)['files']).toMatchObject([{ image: { mimeType: 'image/png', size: PNG.length }, lines: [] }, {}])
    })

    it('refuses bad arguments before reading anything', async () => {
      const h = setup({ files: { 'a.txt': 'one\n' } })
      const refusal = async (args: unknown): Promise<string> => {
        const r = await call(h, 'read_files', args)
        expect(r.isError && r.code === undefined, r.text).toBe(true)
        return r.text
      }
      expect(await refusal({})).toBe('Error: file_paths must be a non-empty list of at most 20 strings')
      expect(await refusal({ file_paths: [] })).toBe('Error: file_paths must be a non-empty list of at most 20 strings')
      expect(await refusal({ file_paths: Array.from({ length: 21 }, () => 'a.txt') })).toBe('Error: file_paths must be a non-empty list of at most 20 strings')
      expect(await refusal({ file_paths: 'a.txt' })).toBe('Error: file_paths must be a non-empty list of at most 20 strings')
      expect(await refusal({ file_paths: ['a.txt', ' ', 7] })).toBe('Error: file_paths[1] must be a non-empty string; file_paths[2] must be a non-empty string')
      expect(await refusal({ file_paths: ['a.txt'], limit: 0 })).toBe('Error: limit must be a positive integer')
      expect(await refusal({ file_paths: ['a.txt'], offset: 2 })).toBe('Error: unknown argument "offset" (allowed: file_paths, limit)')
    })

    it('an aborted call fails as a whole', async () => {
      const h = setup({ files: { 'a.txt': 'one\n' } })
      const r = await h.call('read_files', { file_paths: ['a.txt', 'a.txt'] }, { signal: AbortSignal.abort() })
      expect(r).toMatchObject({ isError: true, code: 'FS_ABORTED' })
    })
  })

  describe('info', () => {
    it('a file: size and modification time, as stat gives them; a directory: its time', async () => {
      const h = setup({ files: { 'a.txt': 'héllo\n', dir: null } })
      const stat = await h.fs.stat(await h.fs.resolve('a.txt'))
      const iso = new Date(stat?.mtime ?? 0).toISOString()
      const file = await call(h, 'info', { path: 'a.txt' })
      expect(expectOk(file)).toBe(`<path>${h.abs('a.txt')}</path>\n<type>file</type>\n<content>\nsize: 7 bytes\nmodified: ${iso}\n</content>`)
      expect(structured(h.tools['info'], file)).toEqual({ path: h.abs('a.txt'), type: 'file', size: 7, modified: iso, link: null })
      const dir = await call(h, 'info', { path: 'dir' })
      expect(expectOk(dir)).toMatch(
        new RegExp(`^<path>${h.abs('dir')}</path>\\n<type>directory</type>\\n<content>\\nmodified: \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n</content>$`),
      )
      expect(structured(h.tools['info'], dir)).toMatchObject({ type: 'directory', size: null, link: null })
    })

    it('a symbolic link is told as one, with what it leads to; a link out leads outside, unfollowed; a broken one to nothing', async () => {
      const h = setup({ files: { 'a.txt': 'hello\n', 'to-a': { symlink: 'a.txt' }, broken: { symlink: 'nowhere' } } })
      linkOut(h)
      const link = await call(h, 'info', { path: 'to-a' })
      expect(expectOk(link)).toMatch(/^<path>.*\/to-a<\/path>\n<type>symlink<\/type>\n<content>\nlinks to: a file\nsize: 6 bytes\nmodified: \S+Z\n<\/content>$/)
      expect(structured(h.tools['info'], link)).toMatchObject({ type: 'symlink', size: 6, link: { type: 'file', size: 6 } })
      const out = await call(h, 'info', { path: 'out' })
      expect(expectOk(out)).toContain('\n<type>symlink</type>\n<content>\nlinks to: a path outside the sandbox roots (not followed)\n</content>')
      expect(structured(h.tools['info'], out)).toMatchObject({
        type: 'symlink',
        size: null,
        modified: null,
        link: { type: 'outside', size: null, modified: null },
      })
      const broken = await call(h, 'info', { path: 'broken' })
      expect(expectOk(broken)).toContain('\n<content>\nlinks to: nothing (a broken link)\n</content>')
      expect(structured(h.tools['info'], broken)).toMatchObject({ link: { type: 'missing' } })
      h.seed('loops/self', { symlink: 'self' })
      const loop = await call(h, 'info', { path: 'loops/self' })
      expect(expectOk(loop)).toContain('\n<type>symlink</type>\n<content>\nlinks to: nothing (a broken link)\n</content>')
    })

    it('a missing path is FS_NOT_FOUND; a path outside the roots FS_SANDBOX_DENIED; nothing is observed', async () => {
      const h = setup({ files: { 'a.txt': 'hello\n' } })
      linkOut(h)
      expect(await call(h, 'info', { path: 'nope.txt' })).toEqual({
        isError: true,
        code: 'FS_NOT_FOUND',
        text: `Error: cannot stat "${h.abs('nope.txt')}": not found`,
      })
      for (const path of ['../x', 'out/secret.txt', '/etc/hostname']) expect((await call(h, 'info', { path })).code, path).toBe('FS_SANDBOX_DENIED')
      expectOk(await call(h, 'info', { path: 'a.txt' }))
      expect((await call(h, 'edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'x' })).code).toBe('FS_NOT_OBSERVED')
    })
  })

  describe('list with details', () => {
    it('shows each size and time before the name; directories and other entries have no size', async () => {
      const h = setup({ files: { 'a.txt': 'hello\n', 'big.txt': 'x'.repeat(12345), sub: null, broken: { symlink: 'nowhere' } } })
      const result = await call(h, 'list', { details: true })
      const { body } = parse(expectOk(result))
      const times = (await Promise.all(['sub', 'a.txt', 'big.txt'].map(async (p) => (await h.fs.stat(await h.fs.resolve(p)))?.mtime))).map((ms) =>
        new Date(ms ?? 0).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      )
      expect(body).toEqual([`    -  ${times[0]}  sub/`, `    6  ${times[1]}  a.txt`, `12345  ${times[2]}  big.txt`, `    -  -                     broken@`])
      expect(structured(h.tools['list'], result)['entries']).toEqual([
        { name: 'sub', type: 'directory', size: null, modified: expect.stringMatching(/Z$/) as unknown },
        { name: 'a.txt', type: 'file', size: 6, modified: expect.stringMatching(/Z$/) as unknown },
        { name: 'big.txt', type: 'file', size: 12345, modified: expect.stringMatching(/Z$/) as unknown },
        { name: 'broken', type: 'other', size: null, modified: null },
      ])
      // The footer and the paging are the list's own.
      expect(expectOk(result).endsWith('\n\n(4 entries: 1 directory, 2 files, 1 other)\n</content>')).toBe(true)
    })

    it('without details (false or null) the text and the value are the list they always were', async () => {
      const h = setup({ files: { 'a.txt': 'hello\n', sub: null } })
      const plain = await call(h, 'list', {})
      for (const details of [false, null]) expect(await call(h, 'list', { details })).toEqual(plain)
      expect(structured(h.tools['list'], plain)['entries']).toEqual([
        { name: 'sub', type: 'directory' },
        { name: 'a.txt', type: 'file' },
      ])
    })

    it('a link leading out of the roots shows nothing of its target', async () => {
      const h = setup({ files: { 'a.txt': 'hello\n' } })
      linkOut(h)
      const { body } = parse(expectOk(await call(h, 'list', { details: true })))
      expect(body[1]).toBe('-  -                     out@')
    })
  })

  describe('list_roots', () => {
    it('the default fence: the workspace, workspace-write, reads confined', async () => {
      const h = setup()
      const result = await call(h, 'list_roots', {})
      expect(expectOk(result)).toBe(
        [
          'Mode: workspace-write: files may be changed only inside the roots below.',
          'Reads: confined to the roots below.',
          `Relative paths start at: ${h.cwd}`,
          'Roots:',
          `${h.cwd} (workspace)`,
        ].join('\n'),
      )
      expect(structured(h.tools['list_roots'], result)).toEqual({
        sandboxed: true,
        mode: 'workspace-write',
        confineReads: true,
        cwd: h.cwd,
        roots: [{ path: h.cwd, workspace: true, writable: true, found: true }],
      })
      expect((await h.call('list_roots', {}, { cwd: `${h.cwd}/sub` })).text).toContain(`Relative paths start at: ${h.cwd}/sub\n`)
      expect((await call(h, 'list_roots', { path: '.' })).text).toBe('Error: unknown argument "path" (allowed: none)')
    })
  })
})

describe('list_roots over fences of every shape (memory)', () => {
  const files = { 'a.txt': 'a\n' }
  const roots = async (fs: ConstructorParameters<typeof SandboxedFileSystem>[0] | SandboxedFileSystem, sandbox?: false): Promise<ToolResult> => {
    const tools = createFileToolsByName({ fs, ...(sandbox === false ? { sandbox } : {}) })
    const result = await tools.list_roots.execute({})
    structured(tools.list_roots, result)
    return result
  }

  it('writable roots, a root not there yet, and confined reads turned off', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files })
    fs.volume.mkdirSync('/shared')
    const fenced = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: '/w', writableRoots: ['/shared', '/later'], confineReads: false })
    const result = await roots(fenced)
    expect(result.text).toBe(
      [
        'Mode: workspace-write: files may be changed only inside the roots below.',
        'Reads: anywhere in the store.',
        'Relative paths start at: /w',
        'Roots:',
        '/w (workspace)',
        '/shared',
        '/later (does not exist yet)',
      ].join('\n'),
    )
    expect(result.value).toMatchObject({ confineReads: false, roots: [{ found: true }, { path: '/shared', writable: true }, { path: '/later', found: false }] })
  })

  it('read-only and full-access say so; no fence at all says the whole store is allowed', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files })
    const readOnly = await roots(new SandboxedFileSystem(fs, { mode: 'read-only', workspaceRoot: '/w' }))
    expect(readOnly.text.split('\n').slice(0, 2)).toEqual(['Mode: read-only: no file may be changed.', 'Reads: confined to the roots below.'])
    expect(readOnly.value).toMatchObject({ mode: 'read-only', roots: [{ path: '/w', writable: false }] })
    const full = await roots(new SandboxedFileSystem(fs, { mode: 'full-access', workspaceRoot: '/w' }))
    expect(full.text.split('\n').slice(0, 2)).toEqual([
      'Mode: full-access: files may be read and changed anywhere in the store.',
      'Reads: anywhere in the store.',
    ])
    expect(full.value).toMatchObject({ confineReads: false })
    const none = await roots(fs, false)
    expect(none.text).toBe('Mode: no sandbox: files may be read and changed anywhere in the store.\nRelative paths start at: /w')
    expect(none.value).toEqual({ sandboxed: false, mode: null, confineReads: false, cwd: '/w', roots: [] })
  })
})

/** The body lines of an envelope (between `<content>` and the blank line before the footer). */
function parse(text: string): { body: string[] } {
  const lines = text.split('\n')
  const end = lines.lastIndexOf('')
  return { body: lines.slice(3, end) }
}
