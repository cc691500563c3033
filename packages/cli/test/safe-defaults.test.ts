/**
 * Safe by default, end to end through the BUILT bin: the root is a fence without any `sandbox`
 * block, a config file's paths start at its own directory whatever the cwd, the server says what it
 * serves, and the model cannot rewrite its own harness (the config, a module it names, `.git`).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, builtTitle, isAlive, missingBuild, removeTempDirs, runBin, tempDir, type RunResult } from './support.js'

afterAll(removeTempDirs)

const SERVING = /^seamfs: serving (.*)\n/

/** What a mounting command said it serves (its first stderr line). */
function servedLine(r: RunResult): string {
  const match = SERVING.exec(r.stderr)
  if (match === null) throw new Error(`no serving line in stderr: ${JSON.stringify(r.stderr)}`)
  return match[1] as string
}

/** The FsError code a failed tool command printed (`… [CODE]` on stderr). */
const codeOf = (r: RunResult): string | undefined => /\[(FS_[A-Z_]+)\]\n$/.exec(r.stderr)?.[1]

describe.skipIf(missingBuild.length > 0)(builtTitle('safe by default: the seamfs CLI'), () => {
  it('with no config: the cwd, confined both ways, and it says so', async () => {
    const top = tempDir('top')
    const cwd = join(top, 'work')
    mkdirSync(cwd)
    writeFileSync(join(top, 'secret.txt'), 'outside secret\n')
    symlinkSync(join(top, 'secret.txt'), join(cwd, 'link-out'))
    const home = tempDir('home')
    const run = (args: readonly string[], input?: string): Promise<RunResult> => runBin(args, { cwd, home, ...(input === undefined ? {} : { input }) })

    const inside = await run(['write', 'in.txt'], 'in\n')
    expect(inside.code).toBe(0)
    expect(servedLine(inside)).toBe(`local disk at ${cwd}; workspace-write in the root, reads confined to it; read-before-write off`)
    for (const path of ['../escape.txt', `${top}/escape.txt`, '/tmp/seamfs-escape.txt', 'link-out']) {
      const w = await run(['write', path], 'pwned\n')
      expect([w.code, codeOf(w)], `write ${path}`).toEqual([1, 'FS_SANDBOX_DENIED'])
    }
    for (const args of [
      ['read', '../secret.txt'],
      ['read', 'link-out'],
      ['read', '/etc/hostname'],
      ['ls', '..'],
      ['grep', 'secret', '..'],
    ]) {
      const r = await run(args)
      expect([r.code, codeOf(r)], args.join(' ')).toEqual([1, 'FS_SANDBOX_DENIED'])
      expect(r.stdout).not.toContain('outside secret')
    }
    expect(readdirSync(top).sort()).toEqual(['secret.txt', 'work'])
    expect(existsSync('/tmp/seamfs-escape.txt')).toBe(false)
    expect(readFileSync(join(top, 'secret.txt'), 'utf8')).toBe('outside secret\n')
  })

  it('a config file’s paths start at its directory, whatever the cwd; command-line paths at the cwd', async () => {
    const project = tempDir('project')
    mkdirSync(join(project, 'work'))
    writeFileSync(join(project, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'local', root: './work' } }))
    const elsewhere = tempDir('elsewhere')
    const home = tempDir('home')
    const w = await runBin(['--config', join(project, 'seamfs.config.json'), 'write', 'a.txt'], { cwd: elsewhere, home, input: 'A\n' })
    expect(w.code).toBe(0)
    expect(servedLine(w)).toMatch(new RegExp(`^local disk at ${project}/work;`))
    expect(readFileSync(join(project, 'work/a.txt'), 'utf8')).toBe('A\n')
    expect(readdirSync(elsewhere)).toEqual([])
    // The same config named relative to the cwd: the --config path starts at the cwd, the root at the file.
    const rel = await runBin(['--config', '../' + project.split('/').at(-1) + '/seamfs.config.json', 'read', 'a.txt'], { cwd: elsewhere, home })
    expect(rel.stdout).toContain('1: A')
    // --fs is a command-line path: it starts at the cwd.
    mkdirSync(join(elsewhere, 'here'))
    const fs = await runBin(['--fs', 'file:here', 'write', 'b.txt'], { cwd: elsewhere, home, input: 'B\n' })
    expect(servedLine(fs)).toMatch(new RegExp(`^local disk at ${elsewhere}/here;`))
    expect(readFileSync(join(elsewhere, 'here/b.txt'), 'utf8')).toBe('B\n')
  })

  it('widening is explicit and visible: full-access and confineReads: false say so', async () => {
    const cwd = tempDir('wide')
    const home = tempDir('home')
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'local', root: './w' }, sandbox: { confineReads: false } }))
    mkdirSync(join(cwd, 'w'))
    writeFileSync(join(cwd, 'up.txt'), 'up\n')
    const read = await runBin(['read', '../up.txt'], { cwd, home })
    expect(servedLine(read)).toBe(`local disk at ${cwd}/w; workspace-write in the root, reads anywhere; read-before-write off`)
    expect(read.stdout).toContain('1: up')
    expect(codeOf(await runBin(['write', '../up.txt'], { cwd, home, input: 'x' }))).toBe('FS_SANDBOX_DENIED')
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'local', root: './w' }, sandbox: { mode: 'full-access' } }))
    const full = await runBin(['write', '../up.txt'], { cwd, home, input: 'down\n' })
    expect(servedLine(full)).toBe(`local disk at ${cwd}/w; full-access: reads and writes anywhere the backend reaches; read-before-write off`)
    expect(readFileSync(join(cwd, 'up.txt'), 'utf8')).toBe('down\n')
  })

  it('a JSON config cannot load a module by itself: --allow-module is the opt-in', async () => {
    const cwd = tempDir('module')
    const home = tempDir('home')
    writeFileSync(join(cwd, 'evil.mjs'), `import { writeFileSync } from 'node:fs'\nwriteFileSync(${JSON.stringify(join(cwd, 'RAN'))}, 'x')\nexport default 1\n`)
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'module', module: './evil.mjs' } }))
    const refused = await runBin(['ls'], { cwd, home })
    expect(refused).toMatchObject({ code: 2, stdout: '' })
    expect(refused.stderr).toBe(
      'seamfs: config: backend.module: expected a module named on the command line (--fs ./backend.js), or --allow-module: a JSON config does not load code by itself, found a module in seamfs.config.json\n',
    )
    expect(existsSync(join(cwd, 'RAN'))).toBe(false)
    // With the opt-in it is imported (and refused for exporting no filesystem).
    expect((await runBin(['--allow-module', 'ls'], { cwd, home })).code).toBe(2)
    expect(existsSync(join(cwd, 'RAN'))).toBe(true)
  })

  it('the code the next start runs is read-only: .npmrc, .husky, node_modules on the lookup path, the seamfs build', async () => {
    const cwd = tempDir('code')
    const home = tempDir('home')
    for (const file of ['.npmrc', '.husky/pre-commit', 'sub/.npmrc']) {
      const w = await runBin(['write', file], { cwd, home, input: 'node-options=--require ./evil.cjs\n' })
      expect([w.code, codeOf(w)], file).toEqual([1, 'FS_SANDBOX_DENIED'])
    }
    expect(readdirSync(cwd)).toEqual([])
    // Served at the repository that holds this CLI: its dependencies and its build are code the next start runs.
    // An edit of text that is not there: were the fence to fail, nothing would change anyway.
    const repo = join(BIN, '../../../..')
    for (const file of [
      'node_modules/commander/index.js',
      'node_modules/new-shadow/index.js',
      'packages/cli/node_modules/commander/index.js',
      'packages/cli/dist/bin.js',
      'packages/cli/package.json',
      'packages/core/dist/index.js',
    ]) {
      const e = await runBin(['--fs', `file:${repo}`, 'edit', file, '--old', 'zz-not-there-zz', '--new', 'x'], { cwd, home })
      expect([e.code, codeOf(e)], file).toEqual([1, 'FS_SANDBOX_DENIED'])
    }
  })

  it('a config module that cannot be imported is a config error (exit 2), and a mistyped URL never echoes its password', async () => {
    const cwd = tempDir('cfgerr')
    const home = tempDir('home')
    const missing = await runBin(['--config', 'nope.mjs', 'ls'], { cwd, home })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^seamfs: config: --config: expected a config module that can be imported/)
    for (const spec of ['sftp:/u:Zq9x-SECRET@h/x', 'sftp:u:Zq9x-SECRET@h', 's3:/b:Zq9x-SECRET@x', 'file://u:Zq9x-SECRET@h/x']) {
      const r = await runBin(['--fs', spec, 'ls'], { cwd, home })
      expect(r.code, spec).toBe(2)
      expect(r.stdout + r.stderr, spec).not.toContain('Zq9x-SECRET')
    }
  })

  describe('the config-rewrite attack, through seamfs mcp', () => {
    let client: Client | undefined
    let pid: number | undefined
    afterEach(async () => {
      await client?.close().catch(() => undefined)
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL')
      client = pid = undefined
    })

    /** Starts `seamfs …args mcp` in `cwd` and returns a tool caller (text, isError, code). */
    async function serve(cwd: string, args: readonly string[]): Promise<(name: string, a: Record<string, unknown>) => Promise<[string, string | undefined]>> {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, ...args, 'mcp'],
        cwd,
        env: { ...(process.env as Record<string, string>), HOME: tempDir('home') },
        stderr: 'pipe',
      })
      client = new Client({ name: 'attack', version: '0.0.0' })
      await client.connect(transport)
      pid = transport.pid ?? undefined
      return async (name, a) => {
        const r = (await (client as Client).callTool({ name, arguments: a })) as CallToolResult
        const first = r.content[0]
        return [first?.type === 'text' ? first.text : '', r.isError === true ? (r._meta?.['seamfs/code'] as string | undefined) : undefined]
      }
    }

    it('the config, the module it names, any seamfs.config.json and .git are read-only to the model in every mode', async () => {
      const cwd = tempDir('attack')
      mkdirSync(join(cwd, '.git/hooks'), { recursive: true })
      writeFileSync(join(cwd, '.git/config'), '[core]\n')
      const backend = join(cwd, 'backend.mjs')
      writeFileSync(
        backend,
        `import { LocalFileSystem } from ${JSON.stringify(join(BIN, '../../../backend-local/dist/index.js'))}\nexport default () => new LocalFileSystem({ cwd: ${JSON.stringify(cwd)} })\n`,
      )
      const config = JSON.stringify({ backend: { type: 'module', module: './backend.mjs' }, sandbox: { mode: 'full-access' } })
      writeFileSync(join(cwd, 'seamfs.config.json'), config)
      const call = await serve(cwd, ['--allow-module'])
      for (const file of ['seamfs.config.json', 'backend.mjs', '.git/config', '.git/hooks/pre-commit', 'sub/seamfs.config.json', './x/../.git/HEAD']) {
        // Read first, so the policy is not what refuses: the fence is.
        await call('read', { file_path: file })
        const [text, code] = await call('write', { file_path: file, content: 'export default () => { throw new Error("pwned") }\n' })
        expect(code, `${file}: ${text}`).toBe('FS_SANDBOX_DENIED')
      }
      const [, editCode] = await call('edit', { file_path: 'seamfs.config.json', old_string: 'full-access', new_string: 'read-only' })
      expect(editCode).toBe('FS_SANDBOX_DENIED')
      // Everything else is writable in full-access: the refusals above are the protection, not the mode.
      expect((await call('write', { file_path: 'evil.mjs', content: 'x' }))[1]).toBeUndefined()
      expect(readFileSync(join(cwd, 'seamfs.config.json'), 'utf8')).toBe(config)
      expect(readFileSync(backend, 'utf8')).toContain('LocalFileSystem')
      expect(readdirSync(join(cwd, '.git/hooks'))).toEqual([])
      expect(existsSync(join(cwd, 'sub'))).toBe(false)
    })

    it('with no config, the model cannot plant one for the next start', async () => {
      const cwd = tempDir('plant')
      const call = await serve(cwd, [])
      const planted = JSON.stringify({ backend: { type: 'local', root: '/' }, sandbox: { mode: 'full-access' } })
      expect((await call('write', { file_path: 'seamfs.config.json', content: planted }))[1]).toBe('FS_SANDBOX_DENIED')
      expect((await call('write', { file_path: 'SEAMFS.CONFIG.JSON', content: planted }))[1]).toBe('FS_SANDBOX_DENIED')
      expect(existsSync(join(cwd, 'seamfs.config.json'))).toBe(false)
      const next = await runBin(['ls'], { cwd, home: tempDir('home') })
      expect(servedLine(next)).toBe(`local disk at ${cwd}; workspace-write in the root, reads confined to it; read-before-write off`)
    })
  })
})
