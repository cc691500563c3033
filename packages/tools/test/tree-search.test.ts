/**
 * glob and grep through a tree listing (`capabilities.listTree: 'native'`: one `listTree`, no `stat`
 * and `listDir` per directory) answer exactly as the directory walk does: same paths in the same
 * order, same matches, counts, truncation, fenced entries and errors, whatever the tree (links
 * inside and out, loops, broken links, version-control directories, ignore files, hostile names), fenced or not.
 * The tree listing here is core's default walk over the memory backend, so links are in play (S3's
 * own listing has none); S3 itself is compared in backend-s3's `search-round-trips.test.ts`.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { FsCapabilities, FsTarget } from '@seamfs/core'
import type { Awaitable, TreePages, TreeRequest } from '@seamfs/core/backend'
import { MemoryFileSystem, type MemoryEntry } from '@seamfs/backend-memory'
import { createFileToolsByName, type ToolsConfig } from '@seamfs/tools'

/** The memory backend, declaring that it lists trees at once (it lists them with core's default walk), counting its tree listings (`listSubtree`, the hook behind `listTree`). */
class TreeListing extends MemoryFileSystem {
  override readonly capabilities: FsCapabilities = { ...new MemoryFileSystem().capabilities, listTree: 'native' }
  trees = 0

  protected override listSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages> {
    this.trees++
    return super.listSubtree(target, request)
  }
}

type Files = Record<string, MemoryEntry>

/** Both backends over `files` (cwd `/w`), or undefined when the tree is not one (a path both a file and a directory). */
function both(files: Files): { walk: MemoryFileSystem; tree: TreeListing } | undefined {
  try {
    return { walk: new MemoryFileSystem({ cwd: '/', files }), tree: new TreeListing({ cwd: '/', files }) }
  } catch {
    return undefined
  }
}

const ARGS = {
  glob: [
    { pattern: '**/*' },
    { pattern: '*.txt' },
    { pattern: 'a/**' },
    { pattern: '**/*', path: 'l' },
    { pattern: '*', path: 'missing' },
    { pattern: '*', path: 'f.txt' },
    { pattern: '**/*', include_ignored: true },
  ],
  grep: [{ pattern: 'x' }, { pattern: 'x', include: '*.txt' }, { pattern: 'x', path: 'a' }, { pattern: 'x', path: 'f.txt' }, { pattern: 'x', path: 'missing' }],
}

async function expectSameAnswers(files: Files, config: Partial<ToolsConfig>, sandboxed: boolean): Promise<void> {
  const fss = both(files)
  if (fss === undefined) return
  const options = { cwd: '/w', config, ...(sandboxed ? {} : { sandbox: false as const }) }
  const walk = createFileToolsByName({ fs: fss.walk, ...options })
  const tree = createFileToolsByName({ fs: fss.tree, ...options })
  for (const args of ARGS.glob) expect(await tree.glob.execute(args), JSON.stringify(args)).toEqual(await walk.glob.execute(args))
  for (const args of ARGS.grep) expect(await tree.grep.execute(args), JSON.stringify(args)).toEqual(await walk.grep.execute(args))
}

describe('glob and grep through a tree listing', () => {
  it('answer as the directory walk does, whatever the tree, fenced or not (property)', async () => {
    const name = fc.constantFrom('a', 'b', 'B', 'é', '.h', 'z9', '😀', '.git', 'node_modules', 'f.txt', 'l', 'm', '.gitignore', '.ignore')
    const path = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => `w/${parts.join('/')}`)
    const rules = fc.constantFrom('a\n', 'b/\n!B\n', '*.txt\n!f.txt\n', '/l\nm/\n', '**/z9\n*\n!*/\n', 'node_modules\n', '\\.h\n😀/**\n', 'é\n!a/é\n')
    const link = fc.constantFrom('/w', '/w/a', '/w/a/b', '/w/l', '/o', '/o/d', '/o/d/e', '/w/nowhere', '/w/.git', 'a', '../o', 'm', 'b/f.txt', '/o/s.txt')
    const entry: fc.Arbitrary<MemoryEntry> = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('x\n', 'no\n', 'x x\nx\n', '') },
      { weight: 1, arbitrary: fc.constant(new Uint8Array([0, 1, 2])) },
      { weight: 4, arbitrary: link.map((to) => ({ symlink: to })) },
      { weight: 2, arbitrary: rules },
    )
    // Ignore files where they surely take part (the tree may replace them), and in a directory only links reach.
    const ignoreFile = fc.constantFrom('w/.gitignore', 'w/.ignore', 'w/a/.gitignore', 'w/b/.ignore', 'o/d/.gitignore')
    const outside: Files = { 'o/s.txt': 'x outside\n', 'o/d/t.txt': 'x deep outside\n', 'o/d/e/u.txt': 'x deeper\n', 'o/d/e/.git/v.txt': 'x\n' }
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(path, entry, { maxKeys: 20 }),
        fc.dictionary(ignoreFile, rules, { maxKeys: 3 }),
        fc.integer({ min: 1, max: 9 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        async (tree, ignores, searchConcurrency, sandboxed, grepMaxMatches) => {
          await expectSameAnswers({ ...outside, ...ignores, ...tree }, { searchConcurrency, grepMaxMatches, globMaxResults: 3 }, sandboxed)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('a directory reached by two links of one wave is listed under the first in path order; a link into the real tree adds nothing', async () => {
    const files: Files = {
      'w/real/f.txt': 'x real\n',
      'w/l1': { symlink: '/o' },
      'w/l2': { symlink: '/o/d' },
      'w/l3': { symlink: '/w/real' },
      'w/l4': { symlink: '/w' },
      'o/s.txt': 'x\n',
      'o/d/t.txt': 'x\n',
      'o/d/e/u.txt': 'x\n',
    }
    const fss = both(files)!
    const tools = createFileToolsByName({ fs: fss.tree, cwd: '/w', sandbox: false })
    const glob = await tools.glob.execute({ pattern: '**/*' })
    expect(glob.value?.paths).toEqual(['l1/s.txt', 'l2/e/u.txt', 'l2/t.txt', 'real/f.txt'])
    expect(fss.tree.trees).toBe(3)
    await expectSameAnswers(files, {}, false)
    await expectSameAnswers(files, { searchConcurrency: 1 }, true)
  })

  it('version-control directories are pruned by the listing itself: nothing below them is listed', async () => {
    const fs = new TreeListing({ cwd: '/w', files: { 'src/a.txt': 'x\n', '.git/objects/ab/cd': 'x\n', 'sub/.hg/store': 'x\n' } })
    const paths: string[] = []
    for await (const page of await fs.listTree(await fs.resolve('.'), { prune: ['.git', '.hg'] })) paths.push(...page.map((e) => e.path))
    expect(paths.sort()).toEqual(['.git', 'src', 'src/a.txt', 'sub', 'sub/.hg'])
    const tools = createFileToolsByName({ fs, cwd: '/w' })
    expect((await tools.grep.execute({ pattern: 'x' })).value?.matches.map((m) => m.path)).toEqual(['src/a.txt'])
  })
})
