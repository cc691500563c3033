/**
 * A `mounts` config end to end through the BUILT bin and through `seamfs mcp` driven by the MCP SDK
 * client: local disk at `/`, a read-only local mount and a memory mount under one tree.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, builtTitle, isAlive, missingBuild, removeTempDirs, runBin, tempDir, type RunResult } from './support.js'

afterAll(removeTempDirs)

const envelope = (path: string, type: 'file' | 'directory', body: readonly string[], footer: string): string =>
  `<path>${path}</path>\n<type>${type}</type>\n<content>\n${body.length === 0 ? '' : `${body.join('\n')}\n\n`}${footer}\n</content>\n`

interface Layout {
  /** The project: the config file and the local store mounted at `/`. */
  readonly project: string
  /** The local store mounted read-only at `/docs`. */
  readonly docs: string
  readonly home: string
  /** The serving line, without its `seamfs: serving ` and its policy part. */
  readonly serves: string
}

/** project/ (mounted at `/`, with the config), docs/ (read-only at `/docs`), memory at `/mem`. */
function layout(): Layout {
  const top = tempDir('mounts')
  const project = join(top, 'project')
  const docs = join(top, 'docs')
  mkdirSync(join(project, 'src'), { recursive: true })
  mkdirSync(docs)
  writeFileSync(join(project, 'src/a.ts'), 'export const a = "TODO local"\n')
  writeFileSync(join(docs, 'guide.md'), '# Guide\nTODO docs\n')
  const config = {
    mounts: {
      '/': { type: 'local', root: '.' },
      '/docs': { type: 'local', root: '../docs', readOnly: true },
      '/mem': { type: 'memory', files: { 'notes.md': 'TODO memory\n' } },
    },
  }
  writeFileSync(join(project, 'seamfs.config.json'), JSON.stringify(config))
  const serves = `mounts / (local disk at ${project}), /docs (local disk at ${docs}, read-only), /mem (memory); workspace-write in the root, reads confined to it`
  return { project, docs, home: tempDir('home'), serves }
}

describe.skipIf(missingBuild.length > 0)(builtTitle('a mounts config through the seamfs bin'), () => {
  let l: Layout
  beforeEach(() => {
    l = layout()
  })

  /** Runs in the project; checks and drops the serving line. */
  const run = async (args: readonly string[], input?: string): Promise<RunResult> => {
    const r = await runBin(args, { cwd: l.project, home: l.home, ...(input === undefined ? {} : { input }) })
    const line = `seamfs: serving ${l.serves}; read-before-write off\n`
    expect(r.stderr.startsWith(line), r.stderr).toBe(true)
    return { ...r, stderr: r.stderr.slice(line.length) }
  }

  it('ls / shows the mount points as directories; ls of a mount lists its store', async () => {
    expect(await run(['ls', '/'])).toEqual({
      code: 0,
      signal: null,
      stderr: '',
      stdout: envelope('/', 'directory', ['docs/', 'mem/', 'src/', 'seamfs.config.json'], '(4 entries: 3 directories, 1 file)'),
    })
    expect((await run(['ls', 'mem'])).stdout).toBe(envelope('/mem', 'directory', ['notes.md'], '(1 entry: 0 directories, 1 file)'))
    expect((await run(['ls', '/docs'])).stdout).toBe(envelope('/docs', 'directory', ['guide.md'], '(1 entry: 0 directories, 1 file)'))
  })

  it('reads and writes in two mounts; a write under the read-only mount is FS_PERMISSION_DENIED', async () => {
    expect((await run(['read', '/docs/guide.md'])).stdout).toBe(
      envelope('/docs/guide.md', 'file', ['1: # Guide', '2: TODO docs'], '(End of file - total 2 lines)'),
    )
    const local = await run(['write', 'src/b.ts'], 'b\n')
    expect(local).toMatchObject({ code: 0, stderr: '', stdout: '<path>/src/b.ts</path>\n<type>file</type>\n<content>\nCreated file\n</content>\n' })
    expect(readFileSync(join(l.project, 'src/b.ts'), 'utf8')).toBe('b\n')
    // Each child has its own memory: the write shows on stdout only.
    const mem = await run(['edit', '/mem/notes.md', '--old', 'TODO', '--new', 'DONE'])
    expect(mem).toMatchObject({
      code: 0,
      stderr: '',
      stdout: 'The file /mem/notes.md has been updated successfully.\n\n@@ -1 +1 @@\n-TODO memory\n+DONE memory\n',
    })
    for (const args of [
      ['write', '/docs/new.md'],
      ['edit', '/docs/guide.md', '--old', 'TODO', '--new', 'DONE'],
      ['rm', '/docs/guide.md'],
      ['mkdir', '/docs/sub'],
    ]) {
      const r = await run(args, 'x\n')
      expect([r.code, r.stdout, /\[(FS_[A-Z_]+)\]\n$/.exec(r.stderr)?.[1]], args.join(' ')).toEqual([1, '', 'FS_PERMISSION_DENIED'])
    }
    expect((await run(['write', '/docs/new.md'], 'x\n')).stderr).toBe('Error: cannot write "/docs/new.md": read-only mount [FS_PERMISSION_DENIED]\n')
    expect(existsSync(join(l.docs, 'new.md'))).toBe(false)
    expect(readFileSync(join(l.docs, 'guide.md'), 'utf8')).toBe('# Guide\nTODO docs\n')
    const across = await run(['mv', 'src/a.ts', '/mem/a.ts'])
    expect(across).toMatchObject({ code: 1, stderr: 'Error: cannot move "/src/a.ts": cannot rename across mounts (to "/mem/a.ts") [FS_UNSUPPORTED]\n' })
    expect(existsSync(join(l.project, 'src/a.ts'))).toBe(true)
  })

  it('glob and grep walk across the mount points', async () => {
    expect((await run(['glob', '**/*.{md,ts}'])).stdout).toBe('docs/guide.md\nmem/notes.md\nsrc/a.ts\n')
    expect((await run(['grep', 'TODO', '--include', '*.{md,ts}'])).stdout).toBe(
      'Found 3 matches\n\ndocs/guide.md\nLine 2: TODO docs\n\nmem/notes.md\nLine 1: TODO memory\n\nsrc/a.ts\nLine 1: export const a = "TODO local"\n',
    )
    expect((await run(['grep', 'TODO', '/mem'])).stdout).toBe('Found 1 match\n\nmem/notes.md\nLine 1: TODO memory\n')
  })

  it('--fs serves one backend instead of the mounts; a module mount in JSON needs --allow-module', async () => {
    const r = await runBin(['--fs', 'memory:', 'ls', '/'], { cwd: l.project, home: l.home })
    expect(r).toMatchObject({ code: 0, stdout: envelope('/', 'directory', [], '(Empty directory)') })
    expect(r.stderr).toBe('seamfs: serving memory; workspace-write in the root, reads confined to it; read-before-write off\n')
    writeFileSync(join(l.project, 'seamfs.config.json'), JSON.stringify({ mounts: { '/': { type: 'memory' }, '/x': { type: 'module', module: './x.js' } } }))
    expect(await runBin(['ls'], { cwd: l.project, home: l.home })).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        'seamfs: config: mounts["/x"].module: expected a module named on the command line (--fs ./backend.js), or --allow-module: a JSON config does not load code by itself, found a module in seamfs.config.json\n',
    })
    writeFileSync(join(l.project, 'seamfs.config.json'), JSON.stringify({ mounts: { '/docs': { type: 'memory' } } }))
    expect(await runBin(['ls'], { cwd: l.project, home: l.home })).toMatchObject({
      code: 2,
      stderr: 'seamfs: config: mounts: expected a mount at "/" (the root of the tree), found only "/docs"\n',
    })
  })

  describe('seamfs mcp on a mounts config', () => {
    let client: Client | undefined
    let pid: number | undefined
    afterEach(async () => {
      await client?.close().catch(() => undefined)
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL')
      client = pid = undefined
    })

    const text = (r: CallToolResult): string => {
      const [first] = r.content
      if (first?.type !== 'text' || r.content.length !== 1) throw new Error(`expected one text block, got ${JSON.stringify(r.content)}`)
      return first.text
    }

    it('lists, reads and writes across the mounts; the read-only mount refuses; one serving line', async () => {
      const elsewhere = tempDir('mcp-cwd')
      let stderr = ''
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, '--config', join(l.project, 'seamfs.config.json'), 'mcp'],
        cwd: elsewhere,
        env: { ...(process.env as Record<string, string>), HOME: l.home },
        stderr: 'pipe',
      })
      transport.stderr?.on('data', (chunk) => (stderr += String(chunk)))
      client = new Client({ name: 'seamfs-mounts-e2e', version: '0.0.0' })
      await client.connect(transport)
      pid = transport.pid ?? undefined
      const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
        (await (client as Client).callTool({ name, arguments: args })) as CallToolResult

      expect(text(await call('list', { path: '/' }))).toBe(
        envelope('/', 'directory', ['docs/', 'mem/', 'src/', 'seamfs.config.json'], '(4 entries: 3 directories, 1 file)').slice(0, -1),
      )
      const w = await call('write', { file_path: '/mem/m.txt', content: 'kept\n' })
      expect(text(w)).toBe('<path>/mem/m.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>')
      // One server, one memory: what was written is there to read.
      expect(text(await call('read', { file_path: '/mem/m.txt' }))).toBe(
        envelope('/mem/m.txt', 'file', ['1: kept'], '(End of file - total 1 lines)').slice(0, -1),
      )
      expect((await call('write', { file_path: 'src/c.ts', content: 'c\n' })).isError).toBe(false)
      expect(readFileSync(join(l.project, 'src/c.ts'), 'utf8')).toBe('c\n')
      const refused = await call('write', { file_path: '/docs/x.md', content: 'x\n' })
      expect(refused.isError).toBe(true)
      expect(refused._meta?.['seamfs/code']).toBe('FS_PERMISSION_DENIED')
      expect(existsSync(join(l.docs, 'x.md'))).toBe(false)
      // The config file is the harness's: read-only to the model whatever mount holds it.
      const config = await call('write', { file_path: '/seamfs.config.json', content: '{}' })
      expect(config._meta?.['seamfs/code']).toBe('FS_SANDBOX_DENIED')
      expect(text(await call('glob', { pattern: '**/*.md' }))).toBe('docs/guide.md\nmem/notes.md')
      expect(existsSync(join(elsewhere, 'src'))).toBe(false)

      await client.close()
      client = undefined
      expect(stderr).toBe(`seamfs: serving ${l.serves}; read-before-write on\n`)
    })
  })
})
