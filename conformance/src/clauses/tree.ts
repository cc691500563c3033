import { expect } from 'vitest'
import type { FileSystem, FsTarget, FsTreeEntry, ListTreeOptions } from '@seamfs/core'
import { codeOf, yieldToLoop, type Env, type Kit } from '../kit.js'
import { byUtf8Bytes, HOSTILE_NAMES } from './list.js'

/** Every entry of `listTree(dir)`, page by page. */
async function treeOf(env: Env, dir = '.', opts?: ListTreeOptions): Promise<FsTreeEntry[]> {
  const entries: FsTreeEntry[] = []
  for await (const page of await env.fs.listTree(await env.resolve(dir), opts)) {
    entries.push(...page)
    await yieldToLoop()
  }
  return entries
}

/**
 * What `listDir` shows of `dir` and of each real directory below it (links not entered), with paths
 * below `dir`; each directory entered once, so a listing that names its own directory cannot recurse.
 */
async function walkOf(fs: FileSystem, dir: FsTarget, prefix = '', seen = new Set<string>([dir.targetKey])): Promise<FsTreeEntry[]> {
  const out: FsTreeEntry[] = []
  for (const entry of await fs.listDir(dir)) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    out.push({ ...entry, path })
    const linked = fs.capabilities.symlinks && (await fs.lstat(entry.target.displayPath))?.type === 'symlink'
    if (entry.type === 'directory' && !linked && !seen.has(entry.target.targetKey)) {
      seen.add(entry.target.targetKey)
      out.push(...(await walkOf(fs, entry.target, path, seen)))
    }
    await yieldToLoop()
  }
  return out
}

/** The fields `listDir` gives an entry, with its path, to compare (order-free: sorted by path). */
const shape = (entries: readonly FsTreeEntry[]): unknown[] =>
  [...entries]
    .sort((a, b) => byUtf8Bytes(a.path, b.path))
    .map((e) => ({ path: e.path, name: e.name, type: e.type, key: e.target.targetKey, size: e.size, version: e.version }))

const paths = (entries: readonly FsTreeEntry[]): string[] => entries.map((e) => e.path).sort(byUtf8Bytes)

/** Keys of a listing larger than a store page (S3 lists 1,000 keys): files at three depths. */
const PAGED = Array.from({ length: 1040 }, (_, i) => (i % 3 === 0 ? `p/f${i}` : i % 3 === 1 ? `p/d${i % 7}/f${i}` : `p/d${i % 5}/e${i % 2}/f${i}`))

/** `listTree`: a whole subtree in one call, each entry once, as `listDir` shows it. */
export function treeClauses(kit: Kit): void {
  kit.group('tree listing', {}, () => {
    kit.test('listTree of a missing directory is FS_NOT_FOUND, of a file FS_NOT_DIRECTORY: the returned promise rejects', async (env) => {
      await env.write('f.txt', 'x')
      expect(await codeOf(env.fs.listTree(await env.resolve('nothing')))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.listTree(await env.resolve('f.txt')))).toBe('FS_NOT_DIRECTORY')
    })

    kit.test('listTree lists every entry below the directory once, with its path and what listDir gives it', async (env) => {
      await env.write('t/a.txt', 'abc')
      await env.write('t/sub/b.txt', 'b')
      await env.write('t/sub/deeper/c.txt', 'cc')
      await env.write('t/sub/deeper/deepest/d.txt', 'ddd')
      for (const name of HOSTILE_NAMES) await env.write(`t/h/${name}`, name)
      await env.write('t/a-b/x.txt', 'x')
      await env.write('t/a/b.txt', 'slash after dash')
      const tree = await treeOf(env, 't')
      expect(
        paths(tree).filter((p, i, all) => all.indexOf(p) !== i),
        'paths listed twice',
      ).toEqual([])
      expect(shape(tree)).toEqual(shape(await walkOf(env.fs, await env.resolve('t'))))
      for (const entry of tree) expect(entry.name).toBe(entry.path.slice(entry.path.lastIndexOf('/') + 1))
      const file = tree.find((e) => e.path === 'sub/deeper/c.txt')
      if (file !== undefined) expect(await env.fs.readText(file.target)).toBe('cc')
      expect(await treeOf(env, 't/sub/deeper/deepest')).toMatchObject([{ path: 'd.txt', name: 'd.txt', type: 'file' }])
    })

    kit.test('a tree larger than any store page (1,040 files, three depths) is listed whole, without duplicates', async (env) => {
      const viaStore = kit.unmet({ hooks: ['writeBytes'] }) === undefined
      for (let at = 0; at < PAGED.length; at += 100) {
        await Promise.all(PAGED.slice(at, at + 100).map((path, i) => (viaStore && i % 20 !== 0 ? env.writeBytes(path, path) : env.write(path, path))))
      }
      const tree = await treeOf(env, 'p')
      const files = tree.filter((e) => e.type === 'file').map((e) => `p/${e.path}`)
      expect(files.length, 'files listed').toBe(PAGED.length)
      expect(files.sort(byUtf8Bytes)).toEqual([...PAGED].sort(byUtf8Bytes))
      const dirs = tree.filter((e) => e.type === 'directory').map((e) => e.path)
      expect(dirs.sort(byUtf8Bytes)).toEqual([
        'd0',
        'd0/e0',
        'd0/e1',
        'd1',
        'd1/e0',
        'd1/e1',
        'd2',
        'd2/e0',
        'd2/e1',
        'd3',
        'd3/e0',
        'd3/e1',
        'd4',
        'd4/e0',
        'd4/e1',
        'd5',
        'd6',
      ])
      for (const e of tree)
        if (e.type === 'file' && e.size !== undefined) expect(e.size, `size of ${e.path}`).toBe(new TextEncoder().encode(`p/${e.path}`).length)
    })

    kit.test('a directory named in prune is listed and never entered; the root itself is entered whatever its name', async (env) => {
      await env.write('r/.git/config', 'x')
      await env.write('r/src/.git/HEAD', 'x')
      await env.write('r/src/a.txt', 'x')
      await env.write('r/keep/.gitignore', 'x')
      expect(paths(await treeOf(env, 'r', { prune: ['.git'] }))).toEqual(['.git', 'keep', 'keep/.gitignore', 'src', 'src/.git', 'src/a.txt'])
      expect(paths(await treeOf(env, 'r/.git', { prune: ['.git'] }))).toEqual(['config'])
      expect(paths(await treeOf(env, 'r', { prune: [] }))).toContain('src/.git/HEAD')
    })

    kit.test('a prune that is not an array of strings is FS_UNSUPPORTED', async (env) => {
      await env.write('d/f.txt', 'x')
      const target = await env.resolve('d')
      for (const prune of ['.git', [1], null]) {
        expect(await codeOf(env.fs.listTree(target, { prune } as unknown as ListTreeOptions)), JSON.stringify(prune)).toBe('FS_UNSUPPORTED')
      }
    })

    kit.test('listTree with an aborted signal is FS_ABORTED; a signal aborted between pages ends the listing with FS_ABORTED', async (env) => {
      await env.write('d/e/f.txt', 'x')
      const before = new AbortController()
      before.abort(new Error('aborted by the test'))
      expect(await codeOf(env.fs.listTree(await env.resolve('d'), { signal: before.signal }))).toBe('FS_ABORTED')
      const between = new AbortController()
      const pages = await env.fs.listTree(await env.resolve('d'), { signal: between.signal })
      between.abort(new Error('aborted by the test'))
      expect(
        await codeOf(async () => {
          for await (const page of pages) void page
        }),
      ).toBe('FS_ABORTED')
    })
  })

  kit.group('tree listing: while it changes', { caps: ['remove'], writes: true }, () => {
    kit.test('a directory removed while the tree is listed is left out or listed whole, never a failure', async (env) => {
      for (let i = 0; i < 6; i++) await env.write(`c/d${i}/e/f.txt`, 'x')
      const seen: string[] = []
      let removed = false
      for await (const page of await env.fs.listTree(await env.resolve('c'))) {
        seen.push(...page.map((e) => e.path))
        if (!removed) await env.fs.remove(await env.resolve('c/d3'), { recursive: true })
        removed = true
      }
      expect(seen.filter((p) => !p.startsWith('d3'))).toEqual(expect.arrayContaining(['d0/e/f.txt', 'd5/e/f.txt']))
    })

    kit.test('no staging residue of in-flight writes is listed', async (env) => {
      await env.write('w/seed.txt', 'x')
      const names = Array.from({ length: 12 }, (_, i) => `sub${i % 3}/f${i}.txt`)
      const writes = Promise.all(names.map(async (name) => env.fs.writeText(await env.resolve(`w/${name}`), 'y'.repeat(64 * 1024))))
      const listed = new Set<string>()
      for (let round = 0; round < 5; round++) for (const e of await treeOf(env, 'w')) listed.add(e.path)
      await writes
      const allowed = new Set(['seed.txt', 'sub0', 'sub1', 'sub2', ...names])
      expect([...listed].filter((p) => !allowed.has(p))).toEqual([])
    })
  })

  kit.group('tree listing: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('a symlink to a directory is listed with link: true and never entered; other links are listed as listDir shows them', async (env) => {
      await env.write('s/dir/inner.txt', 'x')
      await env.write('s/file.txt', 'x')
      await env.symlink('s/to-dir', 'dir')
      await env.symlink('s/to-file', 'file.txt')
      await env.symlink('s/loop', 'loop')
      await env.symlink('s/up', '..')
      const tree = await treeOf(env, 's')
      expect(tree.map((e) => [e.path, e.type, e.link === true]).sort((a, b) => byUtf8Bytes(String(a[0]), String(b[0])))).toEqual([
        ['dir', 'directory', false],
        ['dir/inner.txt', 'file', false],
        ['file.txt', 'file', false],
        ['loop', 'other', false],
        ['to-dir', 'directory', true],
        ['to-file', 'file', false],
        ['up', 'directory', true],
      ])
    })
  })
}
