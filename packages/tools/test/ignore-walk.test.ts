/**
 * What ignore files cost the walk, and that they mean what git means:
 * - an excluded directory is never listed, nor any ignore file below it read (counted at the
 *   backend's own hooks, on the memory and the local backend, and through a tree listing);
 * - the files glob finds are the files `git ls-files --others --exclude-standard` lists, on random
 *   trees with random `.gitignore` files (when git is installed);
 * - the matcher is linear in pattern times name, and a pattern that does not parse matches nothing.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { FsCapabilities, FsDirEntry, FsTarget } from '@seamfs/core'
import type { Awaitable, ReadRequest, TreePages, TreeRequest } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'
import { compileGlob, globMatches, parseIgnoreFile } from '../src/gitignore.js'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-ignore-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** A workspace with a deep `node_modules` (an ignore file of its own inside) and `dist`, both excluded. */
const TREE: Record<string, string> = {
  '.gitignore': 'node_modules/\ndist\n',
  'src/a.ts': 'x\n',
  'src/.ignore': 'gen/\n',
  'src/gen/g.ts': 'x\n',
  'node_modules/.gitignore': '!*\n',
  'node_modules/p/index.js': 'x\n',
  'node_modules/p/node_modules/q/.ignore': '*\n',
  'node_modules/p/node_modules/q/index.js': 'x\n',
  'dist/out/a.js': 'x\n',
}

/** The hooks behind `listDir` and `readBytes`, recorded by display path. */
interface Recorded {
  readonly listed: string[]
  readonly loaded: string[]
}

class CountingMemory extends MemoryFileSystem implements Recorded {
  readonly listed: string[] = []
  readonly loaded: string[] = []

  protected override listEntries(target: FsTarget): Awaitable<FsDirEntry[]> {
    this.listed.push(target.displayPath)
    return super.listEntries(target)
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    this.loaded.push(target.displayPath)
    return super.loadBytes(target, request)
  }
}

class CountingLocal extends LocalFileSystem implements Recorded {
  readonly listed: string[] = []
  readonly loaded: string[] = []

  protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    this.listed.push(target.displayPath)
    return super.listEntries(target)
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    this.loaded.push(target.displayPath)
    return super.loadBytes(target, request)
  }
}

/** The memory backend declaring that it lists trees at once (core's default walk does it), counting its reads. */
class TreeListing extends CountingMemory {
  override readonly capabilities: FsCapabilities = { ...new MemoryFileSystem().capabilities, listTree: 'native' }
  trees = 0

  protected override listSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages> {
    this.trees++
    return super.listSubtree(target, request)
  }
}

function writeTree(root: string, files: Readonly<Record<string, string>>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
}

function local(): { fs: CountingLocal; cwd: string } {
  const cwd = mkdtempSync(join(base, 'walk-'))
  writeTree(cwd, TREE)
  return { fs: new CountingLocal({ cwd }), cwd }
}

const memory = (): { fs: CountingMemory; cwd: string } => ({ fs: new CountingMemory({ cwd: '/w', files: TREE }), cwd: '/w' })

const under = (cwd: string, dirs: readonly string[]) => (path: string) => dirs.some((dir) => path.startsWith(`${cwd}/${dir}/`) || path === `${cwd}/${dir}`)

describe.each([
  ['memory', memory],
  ['local', local],
] as const)('the walk on %s', (_kind, make) => {
  it('never lists an excluded directory or reads an ignore file below one; include_ignored lists them all', async () => {
    const { fs, cwd } = make()
    const tools = createFileToolsByName({ fs, cwd })
    const r = await tools.glob.execute({ pattern: '**/*' })
    expect(r.value).toMatchObject({ paths: ['.gitignore', 'src/.ignore', 'src/a.ts'], ignoredPaths: ['dist', 'node_modules', 'src/gen'] })
    const excluded = under(cwd, ['node_modules', 'dist', 'src/gen'])
    expect(fs.listed.sort()).toEqual([cwd, `${cwd}/src`])
    expect(fs.loaded.sort()).toEqual([`${cwd}/.gitignore`, `${cwd}/src/.ignore`])
    // grep reads what it searches, and still nothing below an excluded directory.
    fs.listed.length = 0
    fs.loaded.length = 0
    expect((await tools.grep.execute({ pattern: 'x' })).value).toMatchObject({ totalMatches: 1 })
    expect(fs.listed.filter(excluded)).toEqual([])
    expect(fs.loaded.filter(excluded)).toEqual([])
    fs.listed.length = 0
    const all = await tools.glob.execute({ pattern: '**/*', include_ignored: true })
    expect(all.value?.totalPaths).toBe(Object.keys(TREE).length)
    expect(fs.listed.filter(excluded).length).toBe(7)
  })
})

describe('through a tree listing', () => {
  it('reads no ignore file below an excluded directory (the one listing still holds its entries) and answers as the walk does', async () => {
    const fs = new TreeListing({ cwd: '/w', files: TREE })
    const tools = createFileToolsByName({ fs, cwd: '/w' })
    const r = await tools.glob.execute({ pattern: '**/*' })
    expect(fs.trees).toBe(1)
    expect(fs.loaded.sort()).toEqual(['/w/.gitignore', '/w/src/.ignore'])
    const walk = createFileToolsByName({ fs: new MemoryFileSystem({ cwd: '/w', files: TREE }), cwd: '/w' })
    expect(r).toEqual(await walk.glob.execute({ pattern: '**/*' }))
    expect(await tools.grep.execute({ pattern: 'x', path: 'src' })).toEqual(await walk.grep.execute({ pattern: 'x', path: 'src' }))
  })
})

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    // Only the tree's own .gitignore files: no global or system excludes.
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, XDG_CONFIG_HOME: cwd },
  })

const hasGit = ((): boolean => {
  try {
    git(base, '--version')
    return true
  } catch {
    return false
  }
})()

const SEED = 3434

describe.skipIf(!hasGit)(`glob finds what git does not ignore (git ls-files --others --exclude-standard; seed ${SEED})`, () => {
  // No `?` among the patterns: git's matches one byte, seamfs's one character, so they differ on `é` (the deviation README.md states).
  const names = ['a', 'b', 'c.log', 'd.txt', '#h', '!n', 'é', 'sp ace', 'ab']
  const patterns = [
    'a',
    'b/',
    '/a',
    'a/b',
    '*.log',
    '!*.log',
    '!a',
    '!b/',
    '**/b',
    'a/**',
    'a/**/d.txt',
    '*',
    '!d.txt',
    '[ab]',
    '[!a]*',
    '\\#h',
    '\\!n',
    '# c',
    '',
    'é',
    'sp\\ ace',
    'sp ace  ',
    '*/d.txt',
    'b/*',
    '!b/d.txt',
    'c.log/',
    '**',
    '/b/a',
    '!*/',
    '**/',
    'b/**/',
    'a*b',
    '!a/b',
    'a/*',
    '!a/*/',
    '/*',
    '!/a',
    '[[:alpha:]]',
    '*.*',
    '!**/d.txt',
  ]
  const path = fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'))
  const ignoreFile = fc.array(fc.constantFrom(...patterns), { maxLength: 6 }).map((lines) => `${lines.join('\n')}\n`)
  const where = fc.constantFrom('', 'a/', 'b/', 'a/b/', 'b/a/')

  it('on random trees with random .gitignore files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(path, { maxLength: 14 }), fc.dictionary(where, ignoreFile, { maxKeys: 3 }), async (paths, ignores) => {
        const cwd = mkdtempSync(join(base, 'git-'))
        const written = new Set<string>()
        const write = (rel: string, text: string): void => {
          try {
            mkdirSync(dirname(join(cwd, rel)), { recursive: true })
            writeFileSync(join(cwd, rel), text)
            written.add(rel)
          } catch {
            // A path through a file, or a file where a directory is: not part of this tree.
          }
        }
        for (const [dir, text] of Object.entries(ignores)) write(`${dir}.gitignore`, text)
        for (const rel of paths) write(rel, 'x\n')
        git(cwd, 'init', '-q')
        const expected = git(cwd, 'ls-files', '-z', '--others', '--exclude-standard')
          .split('\0')
          .filter((p) => p !== '')
        const fs = new LocalFileSystem({ cwd })
        const tools = createFileToolsByName({ fs, cwd, config: { globMaxResults: 1000 } })
        const r = await tools.glob.execute({ pattern: '**/*' })
        await fs.close()
        rmSync(cwd, { recursive: true, force: true })
        expect(r.value?.paths.slice().sort(), JSON.stringify({ ignores, written: [...written] })).toEqual(expected.sort())
      }),
      { numRuns: 100, seed: SEED },
    )
  })
})

describe('the matcher', () => {
  const matches = (pattern: string, text: string): boolean => {
    const glob = compileGlob(pattern)
    return glob !== undefined && globMatches(glob, text)
  }

  it('is linear: patterns that make a backtracking matcher explode answer at once', () => {
    const started = performance.now()
    expect(matches('*a'.repeat(40) + 'b', 'a'.repeat(10_000))).toBe(false)
    expect(matches('**/'.repeat(40) + 'x', `${'d/'.repeat(2000)}y`)).toBe(false)
    expect(matches('?*'.repeat(30) + '[!a]', 'a'.repeat(10_000))).toBe(false)
    // Far below what exponential backtracking would take (hours); generous for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it.each([
    ['[ab', 'a', false],
    ['[[:bogus:]]', 'a', false],
    ['a\\', 'a\\', false],
    ['a\\\\', 'a\\', true],
    ['[]a]', ']', true],
    ['[!]]', ']', false],
    ['[!]]', 'x', true],
    ['[a-c]', 'b', true],
    ['[c-a]', 'b', false],
    ['[a\\-c]', '-', true],
    ['[a\\-c]', 'b', false],
    ['[[:upper:][:digit:]]', '7', true],
    ['[^x]', 'y', true],
    ['a**b', 'a/b', false],
    ['a**b', 'axxb', true],
    ['**/x', 'x', true],
    ['**/x', 'p/q/x', true],
    ['a/**', 'a', false],
    ['a/**', 'a/b/c', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**/b', 'ab', false],
    ['?', '😀', true],
    ['?', '/', false],
    ['*', 'a/b', false],
    ['[/]', '/', false],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['*ab*ab', 'abab', true],
    ['*ab*ab', 'ab', false],
    ['a*c', 'a/c', false],
  ] as const)('%j against %j: %s', (pattern, text, expected) => {
    expect(matches(pattern, text)).toBe(expected)
  })

  it('reads lines as git does', () => {
    const rules = parseIgnoreFile('\ufeff# c\r\n\r\n!keep\\ \r\n\\!x  \n/a/b/\n\\#y\n!\n/\n**\n')
    expect(rules.map((r) => [r.source, r.negated, r.dirOnly, r.anchored])).toEqual([
      ['!keep\\ ', true, false, false],
      ['\\!x', false, false, false],
      ['/a/b/', false, true, true],
      ['\\#y', false, false, false],
      ['**', false, false, false],
    ])
  })
})
