/**
 * `seamfs --overlay` and the `overlay` config (issue 36), in child processes: the model's changes
 * stay in the overlay until a person runs `seamfs commit`; `changes` shows them (text and JSON);
 * a change underneath blocks the commit; over MCP the agent works on the overlay while a person,
 * in another process, reviews and commits; the overlay's directory is never the model's.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, builtTitle, missingBuild, removeTempDirs, runBin, tempDir } from './support.js'

afterAll(removeTempDirs)

const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text

describe.skipIf(missingBuild.length > 0)(builtTitle('seamfs --overlay in child processes'), () => {
  it('changes stay in the overlay until `seamfs commit`; `changes` shows them, with their diffs; a change underneath blocks the commit', async () => {
    const cwd = tempDir('overlay')
    const home = tempDir('overlay-home')
    writeFileSync(join(cwd, 'a.txt'), 'one\ntwo\n')
    writeFileSync(join(cwd, 'b.txt'), 'bee\n')
    const run = (args: string[], input?: string) => runBin(args, { cwd, home, ...(input === undefined ? {} : { input }) })
    expect((await run(['--overlay', 'write', 'new.txt'], 'fresh\n')).code).toBe(0)
    expect((await run(['--overlay', 'edit', 'a.txt', '--old', 'two', '--new', 'TWO'])).code).toBe(0)
    expect((await run(['--overlay', 'rm', 'b.txt'])).code).toBe(0)
    // The disk is as it was.
    expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
    expect(readFileSync(join(cwd, 'b.txt'), 'utf8')).toBe('bee\n')
    // The overlay shows the changes to the model's tools.
    expect((await run(['--overlay', 'read', 'a.txt'])).stdout).toContain('2: TWO')

    const shown = await run(['--overlay', 'changes'])
    expect(shown.code).toBe(0)
    expect(shown.stderr).toContain(`under an overlay (changes kept in ${cwd}/.seamfs/overlay until committed)`)
    expect(shown.stdout).toBe(
      [
        `update            ${cwd}/a.txt (+1 -1)`,
        '@@ -1,2 +1,2 @@',
        ' one',
        '-two',
        '+TWO',
        `remove            ${cwd}/b.txt`,
        `create            ${cwd}/new.txt (+1 -0)`,
        '@@ -0,0 +1 @@',
        '+fresh',
        '',
      ].join('\n'),
    )
    const json = JSON.parse((await run(['--overlay', 'changes', '--json'])).stdout) as { changes: { path: string; kind: string; base: { type: string } }[] }
    expect(json.changes.map((c) => [c.path, c.kind, c.base.type])).toEqual([
      [`${cwd}/a.txt`, 'update', 'file'],
      [`${cwd}/b.txt`, 'remove', 'file'],
      [`${cwd}/new.txt`, 'create', 'absent'],
    ])

    // Someone changes a.txt on disk: the commit applies nothing and says where.
    writeFileSync(join(cwd, 'a.txt'), 'theirs\n')
    const blocked = await run(['--overlay', 'commit'])
    expect(blocked.code).toBe(1)
    expect(blocked.stderr).toContain('Nothing was committed: the store changed under these paths')
    expect(blocked.stderr).toContain(`${cwd}/a.txt: was file`)
    expect(readFileSync(join(cwd, 'b.txt'), 'utf8')).toBe('bee\n')
    // The rest by path, then the conflicting one discarded.
    expect(await run(['--overlay', 'commit', 'new.txt', 'b.txt'])).toMatchObject({ code: 0, stdout: 'Committed 2 changes.\n' })
    expect(readFileSync(join(cwd, 'new.txt'), 'utf8')).toBe('fresh\n')
    expect(await run(['--overlay', 'discard'])).toMatchObject({ code: 0, stdout: 'Discarded 1 change.\n' })
    expect((await run(['--overlay', 'changes'])).stdout).toBe('No changes.\n')
    expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('theirs\n')
    // Without an overlay, the commands say how to get one.
    expect(await run(['changes'])).toMatchObject({ code: 2, stdout: '' })
    expect((await run(['changes'])).stderr).toContain('no overlay: set "overlay": true in the config, or pass --overlay')
  })

  it('the overlay’s directory is never the model’s: a write or a remove there is refused', async () => {
    const cwd = tempDir('overlay-fence')
    const home = tempDir('overlay-fence-home')
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: 'file:.', overlay: { dir: 'state' } }))
    mkdirSync(join(cwd, 'state'))
    const run = (args: string[], input?: string) => runBin(args, { cwd, home, ...(input === undefined ? {} : { input }) })
    expect((await run(['write', 'x.txt'], 'x\n')).code).toBe(0)
    const forged = await run(['write', 'state/overlay.json'], '{}')
    expect(forged.code).toBe(1)
    expect(forged.stderr).toContain('[FS_SANDBOX_DENIED]')
    expect((await run(['rm', 'state/overlay.json'])).code).toBe(1)
    expect(JSON.parse((await run(['changes', '--json'])).stdout)).toMatchObject({ changes: [{ kind: 'create' }] })
    expect(await run(['--overlay', 'ls'], undefined)).toMatchObject({ code: 0 })
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: 'file:.', overlay: 'yes' }))
    expect(await run(['ls'])).toMatchObject({ code: 2, stderr: 'seamfs: config: overlay: expected true, false or { dir }, found the string "yes"\n' })
  })

  it('with an audit log, the model’s changes to the overlay and the commit that lands them are each a line', async () => {
    const cwd = tempDir('overlay-audit')
    const home = tempDir('overlay-audit-home')
    writeFileSync(join(cwd, 'a.txt'), 'one\n')
    const run = (args: string[], input?: string) =>
      runBin(['--overlay', '--audit', 'audit.jsonl', ...args], { cwd, home, ...(input === undefined ? {} : { input }) })
    expect((await run(['write', 'n.txt'], 'new\n')).code).toBe(0)
    expect((await run(['rm', 'a.txt'])).code).toBe(0)
    expect((await run(['commit'])).code).toBe(0)
    const lines = readFileSync(join(cwd, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.map((l) => [l['kind'], l['path'], l['actor']])).toEqual([
      ['create', `${cwd}/n.txt`, 'cli'],
      ['remove', `${cwd}/a.txt`, 'cli'],
      ['create', `${cwd}/n.txt`, 'seamfs commit'],
      ['remove', `${cwd}/a.txt`, 'seamfs commit'],
    ])
  })

  it('over MCP the agent works on the overlay; a person in another process reviews and commits; the agent then sees the store', async () => {
    const root = tempDir('overlay-mcp')
    const home = tempDir('overlay-mcp-home')
    writeFileSync(join(root, 'notes.txt'), 'alpha\n')
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--overlay', 'mcp'],
      cwd: root,
      env: { ...(process.env as Record<string, string>), HOME: home },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'seamfs-overlay-e2e', version: '0.0.0' })
    await client.connect(transport)
    try {
      const call = async (name: string, a: Record<string, unknown>) => (await client.callTool({ name, arguments: a })) as CallToolResult
      expect((await call('read', { file_path: 'notes.txt' })).isError).toBeFalsy()
      expect((await call('edit', { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBeFalsy()
      expect((await call('write', { file_path: 'added.txt', content: 'new\n' })).isError).toBeFalsy()
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('alpha\n')

      const person = (args: string[]) => runBin(['--overlay', ...args], { cwd: root, home })
      const review = await person(['changes'])
      expect(review.stdout).toContain(`update            ${root}/notes.txt (+1 -1)`)
      expect(review.stdout).toContain(`create            ${root}/added.txt`)
      expect(await person(['commit'])).toMatchObject({ code: 0, stdout: 'Committed 2 changes.\n' })
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('beta\n')

      // The running server sees the store now, and the agent goes on from it.
      expect(text(await call('read', { file_path: 'notes.txt' }))).toContain('1: beta')
      expect((await call('edit', { file_path: 'notes.txt', old_string: 'beta', new_string: 'gamma' })).isError).toBeFalsy()
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('beta\n')
      expect((await person(['changes'])).stdout).toContain(`update            ${root}/notes.txt (+1 -1)`)
    } finally {
      await client.close()
    }
  })
})
