/** glob and grep over real backends (memory and a local temp dir): the same cases on both. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { FileSystem, FsDirEntry, FsTarget } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool, type GlobValue, type GrepValue, type ToolContext, type ToolResult, type ToolsConfig } from '@seamfs/tools'

type Seed = string | Uint8Array | { readonly symlink: string }
type Tree = Readonly<Record<string, Seed>>

interface Setup {
  readonly cwd: string
  readonly fs: FileSystem
  glob(args: unknown, context?: ToolContext): Promise<ToolResult<GlobValue>>
  grep(args: unknown, context?: ToolContext): Promise<ToolResult<GrepValue>>
}

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function toolsOver(fs: FileSystem, cwd: string, config: Partial<ToolsConfig>): Setup {
  // The tools' own walk over an instrumented backend: no fence in between (it would add its own calls).
  const tools = createFileTools({ fs, config, sandbox: false })
  const byName = (name: string): FileTool => {
    const tool = tools.find((t) => t.name === name)
    if (tool === undefined) throw new Error(`no tool ${name}`)
    return tool
  }
  return {
    cwd,
    fs,
    glob: (args, context) => byName('glob').execute(args, context) as Promise<ToolResult<GlobValue>>,
    grep: (args, context) => byName('grep').execute(args, context) as Promise<ToolResult<GrepValue>>,
  }
}

function memorySetup(files: Tree, config: Partial<ToolsConfig> = {}): Setup {
  return toolsOver(new MemoryFileSystem({ cwd: '/w', files }), '/w', config)
}

function localSetup(files: Tree, config: Partial<ToolsConfig> = {}): Setup {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-search-')))
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
  for (const [rel, seed] of Object.entries(files)) {
    const abs = join(cwd, rel)
    mkdirSync(dirname(abs), { recursive: true })
    if (typeof seed === 'object' && 'symlink' in seed) symlinkSync(seed.symlink, abs)
    else writeFileSync(abs, seed)
  }
  return toolsOver(new LocalFileSystem({ cwd }), cwd, config)
}

const TREE: Tree = {
  'README.md': '# Title\nTODO: write the readme\n',
  '.env': 'TOKEN=TODO\n',
  '.config/settings.json': '{ "todo": true }\n',
  'src/a.ts': 'export const a = 1 // TODO tidy\nexport const b = 2\n',
  'src/b.js': 'module.exports = {}\n',
  'src/nested/c.ts': 'const c = 3\n// TODO one\n// TODO two\n',
  'src/nested/deep/d.test.ts': 'test()\n',
  'lib/a-b.ts': 'TODO dash\n',
  'lib/a/z.ts': 'TODO slash\n',
  '.git/HEAD': 'TODO in git\n',
  '.git/hooks/x.ts': 'TODO\n',
  '.svn/x.ts': 'TODO\n',
  '.hg/x.ts': 'TODO\n',
  '.bzr/x.ts': 'TODO\n',
  '.jj/x.ts': 'TODO\n',
  '.sl/x.ts': 'TODO\n',
  'src/nested/.git/y.ts': 'TODO\n',
}

const BACKENDS = [
  ['memory', memorySetup],
  ['local', localSetup],
] as const

describe.each(BACKENDS)('glob on %s', (_kind, setup) => {
  it('matches a slash-less pattern against basenames at any depth, in code-point path order, skipping VCS dirs', async () => {
    const r = await setup(TREE).glob({ pattern: '*.ts' })
    expect(r.isError).toBe(false)
    expect(r.text).toBe(['lib/a-b.ts', 'lib/a/z.ts', 'src/a.ts', 'src/nested/c.ts', 'src/nested/deep/d.test.ts'].join('\n'))
    expect(r.value).toEqual({
      root: r.value?.root,
      pattern: '*.ts',
      paths: ['lib/a-b.ts', 'lib/a/z.ts', 'src/a.ts', 'src/nested/c.ts', 'src/nested/deep/d.test.ts'],
      totalPaths: 5,
      fencedDirs: 0,
      fencedPaths: [],
    })
  })

  it('matches a pattern with a slash against the whole relative path; globstar and braces', async () => {
    const s = setup(TREE)
    expect((await s.glob({ pattern: 'src/*.ts' })).text).toBe('src/a.ts')
    expect((await s.glob({ pattern: './src/*.ts' })).text).toBe('src/a.ts')
    expect((await s.glob({ pattern: 'src/**/*.ts' })).value?.paths).toEqual(['src/a.ts', 'src/nested/c.ts', 'src/nested/deep/d.test.ts'])
    expect((await s.glob({ pattern: '**/*.{js,json,md}' })).value?.paths).toEqual(['.config/settings.json', 'README.md', 'src/b.js'])
    expect((await s.glob({ pattern: '*.{js,md}' })).value?.paths).toEqual(['README.md', 'src/b.js'])
    expect((await s.glob({ pattern: '**/deep/**' })).value?.paths).toEqual(['src/nested/deep/d.test.ts'])
  })

  it('includes dotfiles and dot directories, files only', async () => {
    const s = setup(TREE)
    expect((await s.glob({ pattern: '.*' })).value?.paths).toEqual(['.env'])
    expect((await s.glob({ pattern: '*' })).value?.paths).toContain('.config/settings.json')
    expect((await s.glob({ pattern: 'src' })).text).toBe('No files found')
  })

  it('searches under path, printing paths relative to the cwd (reusable by every tool), absolute outside it', async () => {
    const s = setup(TREE)
    const r = await s.glob({ pattern: '*.ts', path: 'src/nested' })
    expect(r.text).toBe('src/nested/c.ts\nsrc/nested/deep/d.test.ts')
    expect(r.value?.root).toBe(`${s.cwd}/src/nested`)
    expect((await s.glob({ pattern: '*.ts', path: `${s.cwd}/lib` })).text).toBe('lib/a-b.ts\nlib/a/z.ts')
    expect((await s.glob({ pattern: '*.ts' }, { cwd: 'lib' })).text).toBe('a-b.ts\na/z.ts')
    expect((await s.glob({ pattern: '*.ts', path: 'a' }, { cwd: 'lib' })).text).toBe('a/z.ts')
    // The root outside the cwd: absolute paths.
    expect((await s.glob({ pattern: '*.ts', path: '../src/nested' }, { cwd: 'lib' })).text).toBe(`${s.cwd}/src/nested/c.ts\n${s.cwd}/src/nested/deep/d.test.ts`)
  })

  it('caps the result with an exact footer', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 7; i++) files[`f${i}.txt`] = ''
    const r = await setup(files, { globMaxResults: 3 }).glob({ pattern: '*.txt' })
    expect(r.text).toBe('f0.txt\nf1.txt\nf2.txt\n\n(Showing 3 of 7 paths. Narrow the pattern or path to see the rest.)')
    expect(r.value?.totalPaths).toBe(7)
    expect(r.value?.paths).toEqual(['f0.txt', 'f1.txt', 'f2.txt'])
    expect((await setup(files, { globMaxResults: 7 }).glob({ pattern: '*.txt' })).text).not.toContain('Showing')
  })

  it('validates its arguments and root', async () => {
    const s = setup(TREE)
    expect(await s.glob({ pattern: '' })).toEqual({ text: 'Error: pattern must be a non-empty string', isError: true })
    expect(await s.glob({ pattern: '  ' })).toEqual({ text: 'Error: pattern must be a non-empty string', isError: true })
    expect(await s.glob({})).toEqual({ text: 'Error: pattern must be a non-empty string', isError: true })
    expect(await s.glob({ pattern: '*', path: '' })).toEqual({ text: 'Error: path must be a non-empty string when given', isError: true })
    expect(await s.glob('x')).toEqual({ text: 'Error: arguments must be an object', isError: true })
    const missing = await s.glob({ pattern: '*', path: 'nope' })
    expect(missing).toEqual({ text: `Error: cannot search "${s.cwd}/nope": not found`, isError: true, code: 'FS_NOT_FOUND' })
    const file = await s.glob({ pattern: '*', path: 'README.md' })
    expect(file).toEqual({ text: `Error: cannot search "${s.cwd}/README.md": not a directory`, isError: true, code: 'FS_NOT_DIRECTORY' })
  })

  it('follows symlinked directories once, prefers real paths, and survives link loops', async () => {
    const s = setup({
      'src/a.ts': '',
      'src/sub/b.ts': '',
      alias: { symlink: 'src' },
      loop: { symlink: '.' },
      'src/sub/up': { symlink: '..' },
      'lib/ext': { symlink: '../src/sub' },
      broken: { symlink: 'nowhere' },
      'file-link.ts': { symlink: 'src/a.ts' },
    })
    expect((await s.glob({ pattern: '*.ts' })).text).toBe('file-link.ts\nsrc/a.ts\nsrc/sub/b.ts')
    // From lib, the linked src/sub is entered, and its link back up to src too (nothing there was seen yet).
    expect((await s.glob({ pattern: '*.ts', path: 'lib' })).text).toBe('lib/ext/b.ts\nlib/ext/up/a.ts')
  })

  it('is deterministic', async () => {
    const s = setup(TREE)
    const first = await s.glob({ pattern: '**' })
    for (let i = 0; i < 3; i++) expect(await s.glob({ pattern: '**' })).toEqual(first)
  })
})

describe.each(BACKENDS)('grep on %s', (_kind, setup) => {
  it('groups matches by file in path order, skipping VCS dirs, including dotfiles', async () => {
    const r = await setup(TREE).grep({ pattern: 'TODO' })
    expect(r.isError).toBe(false)
    expect(r.text).toBe(
      [
        'Found 7 matches',
        '',
        '.env',
        'Line 1: TOKEN=TODO',
        '',
        'README.md',
        'Line 2: TODO: write the readme',
        '',
        'lib/a-b.ts',
        'Line 1: TODO dash',
        '',
        'lib/a/z.ts',
        'Line 1: TODO slash',
        '',
        'src/a.ts',
        'Line 1: export const a = 1 // TODO tidy',
        '',
        'src/nested/c.ts',
        'Line 2: // TODO one',
        'Line 3: // TODO two',
      ].join('\n'),
    )
    expect(r.value?.matches[0]).toEqual({ path: '.env', line: 1, text: 'TOKEN=TODO' })
    expect(r.value?.totalMatches).toBe(7)
    expect(r.value?.skippedFiles).toBe(0)
    expect(r.value?.pattern).toBe('TODO')
  })

  it('says 1 match, No matches found, and searches a single file', async () => {
    const s = setup(TREE)
    expect((await s.grep({ pattern: 'tidy' })).text).toBe('Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO tidy')
    expect(await s.grep({ pattern: 'nothing-like-this' })).toMatchObject({ text: 'No matches found', isError: false })
    const one = await s.grep({ pattern: 'TODO', path: 'src/nested/c.ts' })
    expect(one.text).toBe(`Found 2 matches\n\nsrc/nested/c.ts\nLine 2: // TODO one\nLine 3: // TODO two`)
    expect(one.value?.root).toBe(`${s.cwd}/src/nested/c.ts`)
    expect((await s.grep({ pattern: 'TODO', path: 'src/nested/c.ts', include: '*.js' })).text).toBe('No matches found')
    expect((await s.grep({ pattern: 'TODO', path: 'src' })).value?.matches.map((m) => m.path)).toEqual(['src/a.ts', 'src/nested/c.ts', 'src/nested/c.ts'])
  })

  it('filters by include like glob', async () => {
    const s = setup(TREE)
    expect((await s.grep({ pattern: 'TODO', include: '*.ts' })).value?.matches.map((m) => m.path)).toEqual([
      'lib/a-b.ts',
      'lib/a/z.ts',
      'src/a.ts',
      'src/nested/c.ts',
      'src/nested/c.ts',
    ])
    expect((await s.grep({ pattern: 'TODO', include: 'src/**' })).value?.totalMatches).toBe(3)
    expect((await s.grep({ pattern: 'TODO', include: '*.{md,json}' })).text).toBe('Found 1 match\n\nREADME.md\nLine 2: TODO: write the readme')
    expect((await s.grep({ pattern: '(?:todo|TODO)', include: '.*/*.json' })).value?.matches).toEqual([
      { path: '.config/settings.json', line: 1, text: '{ "todo": true }' },
    ])
    expect(await s.grep({ pattern: 'x', include: '' })).toEqual({ text: 'Error: include must be a non-empty string when given', isError: true })
  })

  it('skips and counts binary and non-UTF-8 files', async () => {
    const s = setup({
      'a.txt': 'needle\n',
      'bin.dat': new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x0a]),
      'latin1.txt': new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0xe9, 0x0a]),
    })
    const r = await s.grep({ pattern: 'needle' })
    expect(r.text).toBe('Found 1 match\n\na.txt\nLine 1: needle\n\n(2 binary or non-UTF-8 files skipped: "bin.dat", "latin1.txt")')
    expect(r.value?.skippedFiles).toBe(2)
    expect(r.value?.skippedPaths).toEqual(['bin.dat', 'latin1.txt'])
    const none = await s.grep({ pattern: 'needle', include: '*.dat' })
    expect(none.text).toBe('No matches found\n\n(1 binary or non-UTF-8 file skipped: "bin.dat")')
  })

  it('matches per line, stripping one trailing CR', async () => {
    const s = setup({ 'crlf.txt': 'one\r\ntwo end\r\n\r\nthree\r\r\nlast end' })
    const r = await s.grep({ pattern: 'end$' })
    expect(r.text).toBe('Found 2 matches\n\ncrlf.txt\nLine 2: two end\nLine 5: last end')
    expect((await s.grep({ pattern: '^$' })).value?.matches).toEqual([{ path: 'crlf.txt', line: 3, text: '' }])
    expect((await s.grep({ pattern: '\\r$' })).value?.matches).toEqual([{ path: 'crlf.txt', line: 4, text: 'three\r' }])
  })

  it('rejects an invalid or empty pattern without a code', async () => {
    const s = setup(TREE)
    expect(await s.grep({ pattern: '(' })).toEqual({ text: 'Error: invalid regular expression: /(/: Unterminated group', isError: true })
    expect(await s.grep({ pattern: '' })).toEqual({ text: 'Error: pattern must be a non-empty string', isError: true })
    expect(await s.grep({ pattern: 3 })).toEqual({ text: 'Error: pattern must be a non-empty string', isError: true })
    expect((await s.grep({ pattern: '\\p{Lu}ODO', include: 'README.md' })).value?.totalMatches).toBe(1)
    expect((await s.grep({ pattern: 'TODO\\:', include: 'README.md' })).value?.totalMatches).toBe(1) // legacy (non-Unicode) grammar
    const missing = await s.grep({ pattern: 'x', path: 'nope' })
    expect(missing).toEqual({ text: `Error: cannot search "${s.cwd}/nope": not found`, isError: true, code: 'FS_NOT_FOUND' })
  })

  it('caps matches with exact header and footers', async () => {
    const s = setup({ 'a.txt': 'x1\nx2\nx3\n', 'b.txt': 'x4\nx5\n', 'c.txt': 'x6\n', 'z.bin': new Uint8Array([0]) }, { grepMaxMatches: 4 })
    const r = await s.grep({ pattern: 'x\\d' })
    expect(r.text).toBe(
      'Found 4 of 6 matches\n\na.txt\nLine 1: x1\nLine 2: x2\nLine 3: x3\n\nb.txt\nLine 1: x4\n\n' +
        '(Showing 4 of 6 matches. Narrow the pattern, path or include to see the rest.)\n(1 binary or non-UTF-8 file skipped: "z.bin")',
    )
    expect(r.value?.totalMatches).toBe(6)
    expect(r.value?.matches).toHaveLength(4)
  })

  it('cuts previews at grepMaxLineBytes on a character boundary', async () => {
    const s = setup({ 'u.txt': 'aaaaaaaaa€€\naaaaaaa€\naaaaaaaa😀\n' + 'é'.repeat(40) + '\n' }, { grepMaxLineBytes: 10 })
    const r = await s.grep({ pattern: 'a|é' })
    expect(r.value?.matches.map((m) => m.text)).toEqual(['aaaaaaaaa (line truncated)', 'aaaaaaa€', 'aaaaaaaa (line truncated)', 'ééééé (line truncated)'])
    expect(r.text).toContain('Line 1: aaaaaaaaa (line truncated)\nLine 2: aaaaaaa€\n')
  })

  it('streams large files (readStreamMinSize) across chunk boundaries, and discards a file that turns out not to be text', async () => {
    const filler = `${'y'.repeat(99)}\n`.repeat(655) // 65 500 bytes: the next line's needle straddles the 64 KiB chunk boundary
    const s = setup(
      {
        'big.txt': `${filler}${'z'.repeat(33)}needle${'z'.repeat(50)}\nneedle end`,
        'late-binary.txt': Buffer.concat([Buffer.from(`needle\n${filler}`), Buffer.from([0xff, 0x0a])]),
      },
      { readStreamMinSize: 1 },
    )
    const r = await s.grep({ pattern: 'needle' })
    expect(r.value?.matches).toEqual([
      { path: 'big.txt', line: 656, text: `${'z'.repeat(33)}needle${'z'.repeat(50)}` },
      { path: 'big.txt', line: 657, text: 'needle end' },
    ])
    expect(r.value?.skippedFiles).toBe(1)
  })

  it('stops a pathological pattern at the deadline, without a code', async () => {
    const s = setup({ 'evil.txt': `${'a'.repeat(40)}b\n` }, { searchTimeoutMs: 500 })
    const started = Date.now()
    const r = await s.grep({ pattern: '^(a+)+$' })
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r).toEqual({
      text: 'Error: grep stopped after 500 ms (the pattern is too slow on this text); narrow pattern, path or include',
      isError: true,
    })
    // The tool still works afterwards (the stuck thread was terminated; the shared pool starts another when needed).
    expect((await s.grep({ pattern: 'b$' })).value?.totalMatches).toBe(1)
  })

  it("stops on the caller's signal with FS_ABORTED", async () => {
    const s = setup({ 'evil.txt': `${'a'.repeat(40)}b\n` })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const started = Date.now()
    const r = await s.grep({ pattern: '^(a+)+$' }, { signal: controller.signal })
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r).toEqual({ text: 'Error: grep aborted', isError: true, code: 'FS_ABORTED' })
    expect(await s.glob({ pattern: '*' }, { signal: AbortSignal.abort() })).toMatchObject({ isError: true, code: 'FS_ABORTED' })
  })

  it('is deterministic', async () => {
    const s = setup(TREE)
    const first = await s.grep({ pattern: '.' })
    expect(first.value?.matches.map((m) => m.path)).toEqual([...(first.value?.matches.map((m) => m.path) ?? [])].sort())
    for (let i = 0; i < 3; i++) expect(await s.grep({ pattern: '.' })).toEqual(first)
  })
})

/** A memory backend whose listings take a while (or forever), to exercise the walk's deadline. */
class SlowMemory extends MemoryFileSystem {
  constructor(
    files: Tree,
    readonly delayMs: number | undefined,
  ) {
    super({ cwd: '/w', files })
  }

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    if (this.delayMs === undefined) return new Promise<never>(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, this.delayMs))
    return super.listEntries(target)
  }
}

describe('search deadline on the walk', () => {
  const files: Tree = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`d${i}/f.txt`, 'x\n']))

  it('stops a slow walk between directories', async () => {
    const tools = toolsOver(new SlowMemory(files, 60), '/w', { searchTimeoutMs: 200 })
    expect(await tools.glob({ pattern: '*' })).toEqual({
      text: 'Error: glob stopped after 200 ms (the tree may be too large); narrow the pattern or path',
      isError: true,
    })
    expect((await tools.grep({ pattern: 'x' })).text).toMatch(/^Error: grep stopped after 200 ms/)
  })

  it('does not wait on a listing that never ends', async () => {
    const tools = toolsOver(new SlowMemory(files, undefined), '/w', { searchTimeoutMs: 200 })
    expect((await tools.glob({ pattern: '*' })).text).toMatch(/^Error: glob stopped after 200 ms/)
  })
})

describe('registration', () => {
  it('createFileTools puts glob and grep after the file tools: read-only, closed schemas, prompts', () => {
    const tools = createFileTools({ fs: new MemoryFileSystem() })
    expect(tools.map((t) => t.name).slice(0, 6)).toEqual(['list', 'read', 'write', 'edit', 'glob', 'grep'])
    for (const tool of tools.slice(4, 6)) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['pattern'], additionalProperties: false })
      expect(tool.annotations.readOnlyHint).toBe(true)
      expect(tool.prompt.length).toBeGreaterThan(0)
    }
  })
})

describe('search footers name what they skipped', () => {
  it('the first five in path order, then how many more', async () => {
    const files: Record<string, Uint8Array | string> = { 'a.txt': 'needle\n' }
    for (const name of ['z9', 'b2', 'b1', 'd/x', 'c', 'a0', 'e']) files[`${name}.bin`] = new Uint8Array([0x6e, 0x00])
    const fs = new MemoryFileSystem({ cwd: '/w', files })
    const grep = createFileTools({ fs, cwd: '/w' }).find((t) => t.name === 'grep') as FileTool
    const r = await grep.execute({ pattern: 'needle' })
    expect(r.text).toBe(
      'Found 1 match\n\na.txt\nLine 1: needle\n\n(7 binary or non-UTF-8 files skipped: "a0.bin", "b1.bin", "b2.bin", "c.bin", "d/x.bin" and 2 more)',
    )
  })
})
