/**
 * Search under confined reads skips what the fence refuses instead of failing: a workspace with one
 * symlink pointing outside (a virtualenv's `bin/python`, a linked cache directory) still globs and
 * greps, the links are counted in the footer like binary files, and no outside byte comes back.
 * On the local disk and in memory, through `SandboxedFileSystem` with its defaults.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SandboxedFileSystem, type FileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool } from '@seamfs/tools'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-fenced-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** `<top>/outside/{secret.txt, deep/more.txt}` and `<top>/ws` with `src/a.txt`, `venv/bin/python` → outside, `cache` → outside. */
function local(): { fs: FileSystem; ws: string } {
  const top = mkdtempSync(join(base, 'l-'))
  mkdirSync(join(top, 'outside/deep'), { recursive: true })
  writeFileSync(join(top, 'outside/secret.txt'), 'secret outside\n')
  writeFileSync(join(top, 'outside/deep/more.txt'), 'secret more\n')
  mkdirSync(join(top, 'ws/src'), { recursive: true })
  mkdirSync(join(top, 'ws/venv/bin'), { recursive: true })
  writeFileSync(join(top, 'ws/src/a.txt'), 'a secret inside\n')
  symlinkSync(join(top, 'outside/secret.txt'), join(top, 'ws/venv/bin/python'))
  symlinkSync(join(top, 'outside'), join(top, 'ws/cache'))
  return { fs: new LocalFileSystem({ cwd: join(top, 'ws') }), ws: join(top, 'ws') }
}

function memory(): { fs: FileSystem; ws: string } {
  const fs = new MemoryFileSystem({
    files: {
      'outside/secret.txt': 'secret outside\n',
      'outside/deep/more.txt': 'secret more\n',
      'ws/src/a.txt': 'a secret inside\n',
      'ws/venv/bin/python': { symlink: '/outside/secret.txt' },
      'ws/cache': { symlink: '/outside' },
    },
  })
  return { fs, ws: '/ws' }
}

describe.each([
  ['local', local],
  ['memory', memory],
] as const)('confined search on %s', (_name, make) => {
  const tools = (): { glob: FileTool; grep: FileTool; list: FileTool; ws: string } => {
    const { fs, ws } = make()
    const sandboxed = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: ws })
    const all = createFileTools({ fs: sandboxed, cwd: ws })
    const tool = (name: string): FileTool => all.find((t) => t.name === name) as FileTool
    return { glob: tool('glob'), grep: tool('grep'), list: tool('list'), ws }
  }

  it('glob lists what lies inside, skips both links that point out (the file one too: its type is not ours to know), and says so', async () => {
    const { glob } = tools()
    const r = await glob.execute({ pattern: '**/*' })
    expect(r.isError).toBe(false)
    // Named, as paths the other tools take.
    expect(r.text).toBe('src/a.txt\n\n(2 linked files or directories outside the sandbox skipped: "cache", "venv/bin/python")')
    expect(r.value).toMatchObject({ paths: ['src/a.txt'], totalPaths: 1, fencedDirs: 2, fencedPaths: ['cache', 'venv/bin/python'] })
    expect(r.text).not.toContain('more.txt')
  })

  it('grep searches the inside, skips both links, counts them, and returns no outside byte', async () => {
    const { grep } = tools()
    const r = await grep.execute({ pattern: 'secret' })
    expect(r.isError).toBe(false)
    expect(r.text).toBe(
      'Found 1 match\n\nsrc/a.txt\nLine 1: a secret inside\n\n(2 linked files or directories outside the sandbox skipped: "cache", "venv/bin/python")',
    )
    expect(r.value).toMatchObject({ totalMatches: 1, fencedEntries: 2, fencedPaths: ['cache', 'venv/bin/python'] })
  })

  it('a search rooted at the outbound link itself is refused, not skipped', async () => {
    const { grep, glob } = tools()
    expect((await grep.execute({ pattern: 'secret', path: 'cache' })).code).toBe('FS_SANDBOX_DENIED')
    expect((await glob.execute({ pattern: '*', path: 'cache' })).code).toBe('FS_SANDBOX_DENIED')
  })

  it('list shows the links by name (they lie inside) as `other`, nothing of what they lead to', async () => {
    const { list } = tools()
    const r = await list.execute({})
    expect(r.isError).toBe(false)
    expect(r.text).toContain('cache@')
    expect(r.text).not.toContain('secret')
    expect(r.value).toMatchObject({
      entries: [
        { name: 'src', type: 'directory' },
        { name: 'venv', type: 'directory' },
        { name: 'cache', type: 'other' },
      ],
    })
    const bin = await list.execute({ path: 'venv/bin' })
    expect(bin.value).toMatchObject({ entries: [{ name: 'python', type: 'other' }], counts: { directories: 0, files: 0, other: 1 } })
  })
})
