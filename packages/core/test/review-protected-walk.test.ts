/**
 * Review of the protected-name walk now that it lists through the inner store's tree listing
 * (`innerListSubtree`): a recursive remove or a move of a tree holding a protected name anywhere
 * below (deep, behind links, as a link, at the entry bound) is refused, and nothing changes.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem, type FileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-review-walk-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

type Seed = string | null | { symlink: string }
interface Store {
  fs: FileSystem
  exists(rel: string): boolean
}

let n = 0
function store(kind: 'local' | 'memory', files: Record<string, Seed>, maxRemoveEntries?: number): Store {
  if (kind === 'memory') {
    const seeds: Record<string, Seed> = {}
    for (const [k, v] of Object.entries(files)) seeds[v === null ? `${k}/` : k] = v
    const inner = new MemoryFileSystem({ cwd: '/w', files: seeds, ...(maxRemoveEntries === undefined ? {} : { maxRemoveEntries }) })
    return {
      fs: new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w' }),
      exists: (rel) => inner.volume.existsSync(`/w/${rel}`),
    }
  }
  const ws = join(base, `ws${n++}`)
  mkdirSync(ws, { recursive: true })
  for (const [rel, v] of Object.entries(files)) {
    const at = join(ws, rel)
    if (v === null) mkdirSync(at, { recursive: true })
    else {
      mkdirSync(join(at, '..'), { recursive: true })
      if (typeof v === 'string') writeFileSync(at, v)
      else symlinkSync(v.symlink, at)
    }
  }
  const inner = new LocalFileSystem({ cwd: ws, ...(maxRemoveEntries === undefined ? {} : { maxRemoveEntries }) })
  return { fs: new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: ws }), exists: (rel) => existsSync(join(ws, rel)) }
}

async function code(op: () => Promise<unknown>): Promise<string> {
  try {
    await op()
    return 'ok'
  } catch (err) {
    return isFsError(err) ? err.code : String(err)
  }
}

const deep = (depth: number): string => Array.from({ length: depth }, (_, i) => `d${i}`).join('/')

describe.each(['local', 'memory'] as const)('review: protected-name walk through listTree (%s)', (kind) => {
  const cases: [string, Record<string, Seed>, string][] = [
    ['a .git 120 levels down', { [`t/${deep(120)}/.git/config`]: '[core]\n' }, `t/${deep(120)}/.git/config`],
    ['node_modules 60 levels down', { [`t/${deep(60)}/node_modules/x/index.js`]: 'x\n' }, `t/${deep(60)}/node_modules/x/index.js`],
    ['a link named .git', { 't/a/keep': 'k\n', 't/a/.git': { symlink: '../../elsewhere' }, 'elsewhere/config': 'c\n' }, 't/a/.git'],
    ['a .GIT in another case', { 't/a/.GIT/HEAD': 'ref\n' }, 't/a/.GIT/HEAD'],
    ['a .git beside a link loop', { 't/a/loop': { symlink: 'loop' }, 't/b/self': { symlink: '..' }, 't/b/c/.git/HEAD': 'ref\n' }, 't/b/c/.git/HEAD'],
    ['a .husky behind a link to its own tree', { 't/up': { symlink: '.' }, 't/z/.husky/pre-commit': 'x\n' }, 't/z/.husky/pre-commit'],
  ]
  it.each(cases)('remove and move of a tree with %s are refused, nothing changed', async (_, files, keep) => {
    const s = store(kind, files)
    expect(await code(async () => s.fs.remove(await s.fs.resolve('t'), { recursive: true }))).toBe('FS_SANDBOX_DENIED')
    expect(await code(async () => s.fs.rename(await s.fs.resolve('t'), await s.fs.resolve('moved')))).toBe('FS_SANDBOX_DENIED')
    expect(s.exists(keep)).toBe(true)
    expect(s.exists('moved')).toBe(false)
  })

  it('the entry bound: a tree at the bound is walked, one more is refused before anything is removed', async () => {
    const files: Record<string, Seed> = {}
    // 4 directories of 4 files: 20 entries below t
    for (let d = 0; d < 4; d++) for (let f = 0; f < 4; f++) files[`t/d${d}/f${f}`] = 'x\n'
    const at = store(kind, files, 20)
    expect(await code(async () => at.fs.rename(await at.fs.resolve('t'), await at.fs.resolve('moved')))).toBe('ok')
    files['t/d3/extra'] = 'x\n'
    const over = store(kind, files, 20)
    expect(await code(async () => over.fs.remove(await over.fs.resolve('t'), { recursive: true }))).toBe('FS_TOO_LARGE')
    expect(over.exists('t/d3/extra')).toBe(true)
    // A protected name past the bound is refused too (by the bound, not passed).
    const hidden = store(kind, { ...files, 't/d3/zz/.git/HEAD': 'ref\n' }, 20)
    expect(await code(async () => hidden.fs.remove(await hidden.fs.resolve('t'), { recursive: true }))).not.toBe('ok')
    expect(hidden.exists('t/d3/zz/.git/HEAD')).toBe(true)
  })

  it('an aborted remove leaves the tree as it was', async () => {
    const s = store(kind, { [`t/${deep(30)}/f`]: 'x\n', 't/.git/HEAD': 'r\n' })
    const ac = new AbortController()
    const p = code(async () => s.fs.remove(await s.fs.resolve('t'), { recursive: true, signal: ac.signal }))
    ac.abort()
    expect(['FS_ABORTED', 'FS_SANDBOX_DENIED']).toContain(await p)
    expect(s.exists('t/.git/HEAD')).toBe(true)
  })
})
