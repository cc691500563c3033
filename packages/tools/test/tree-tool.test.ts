/**
 * The `tree` tool on the memory and the local backend, behind the default fence: the exact text,
 * depth, the cap on entries shown (a directory's entries all or none, the listed directory's cut
 * where `list` continues), the cap on entries listed, links (listed, never entered; a link out of
 * the roots is `other` and never followed), version-control directories, errors, and structured
 * content valid against its schema.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { afterEach, describe, expect, it } from 'vitest'
import { FsError, type FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, ObservationPolicy, type ToolResult, type TreeValue } from '@seamfs/tools'
import { BACKENDS, expectOk, listEnvelope, makeHarness, type BackendKind, type Harness, type HarnessOptions } from './tool-harness.js'

const validator = new AjvJsonSchemaValidator()

describe.each(BACKENDS)('tree on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  const outside: string[] = []
  afterEach(() => {
    harness?.dispose()
    harness = undefined
    for (const dir of outside.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const setup = (options: HarnessOptions = {}): Harness => (harness = makeHarness(kind, { policy: new ObservationPolicy(), ...options }))
  /** `tree` with `args`: a success whose structured content validates; returns the result. */
  const tree = async (h: Harness, args: unknown): Promise<ToolResult<TreeValue>> => {
    const result = (await h.call('tree', args)) as ToolResult<TreeValue>
    expectOk(result)
    const spec = h.tools['tree']?.structured
    const verdict = validator.getValidator(spec?.schema ?? {})(spec?.content(result.value))
    expect(verdict.errorMessage).toBeUndefined()
    return result
  }
  /** A directory outside the workspace with a file in it, linked from the workspace as `rel`. */
  const linkOut = (h: Harness, rel: string): void => {
    if (kind === 'memory') {
      const fs = h.fs as MemoryFileSystem
      fs.volume.mkdirSync('/elsewhere/deeper', { recursive: true })
      fs.volume.writeFileSync('/elsewhere/deeper/secret.txt', 'secret\n')
      h.seed(rel, { symlink: '/elsewhere' })
    } else {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-outside-')))
      outside.push(dir)
      mkdirSync(join(dir, 'deeper'))
      writeFileSync(join(dir, 'deeper', 'secret.txt'), 'secret\n')
      symlinkSync(dir, join(h.cwd, rel))
    }
  }

  it('an indented tree, directories first, each kind in code-point order, to the default depth of 3', async () => {
    const h = setup({
      files: {
        'README.md': '#\n',
        'src/index.ts': 'x\n',
        'src/lib/a.ts': 'a\n',
        'src/lib/deep/b.ts': 'b\n',
        'src/lib/deep/c.ts': 'c\n',
        docs: null,
        'B.txt': '',
      },
    })
    const result = await tree(h, {})
    const body = ['docs/', 'src/', '  lib/', '    deep/ (2 entries not shown)', '    a.ts', '  index.ts', 'B.txt', 'README.md']
    const footer = '(Showing 8 entries: 4 directories, 4 files. 2 more entries in 1 collapsed directory: pass it as path to see inside.)'
    expect(result.text).toBe(listEnvelope(h.cwd, body, footer))
    expect(result.value?.entries.slice(2, 4)).toEqual([
      { path: 'src/lib', type: 'directory', depth: 2, state: 'expanded', hidden: 0 },
      { path: 'src/lib/deep', type: 'directory', depth: 3, state: 'collapsed', hidden: 2 },
    ])
    expect(result.value).toMatchObject({ path: h.cwd, depth: 3, hiddenEntries: 2, rootHidden: 0, complete: true, stopped: null })
    // Deep enough for all of it: the footer of a whole tree, as list words it.
    expect((await tree(h, { depth: 4 })).text.endsWith('\n\n(10 entries: 4 directories, 6 files)\n</content>')).toBe(true)
    expect((await tree(h, { path: 'src/lib', depth: 1 })).text).toBe(
      listEnvelope(
        h.abs('src/lib'),
        ['deep/ (2 entries not shown)', 'a.ts'],
        '(Showing 2 entries: 1 directory, 1 file. 2 more entries in 1 collapsed directory: pass it as path to see inside.)',
      ),
    )
    expect((await tree(h, { path: 'docs' })).text).toBe(listEnvelope(h.abs('docs'), [], '(Empty directory)'))
  })

  it('shows at most listMaxEntries: breadth-first, a directory all or none, the listed one cut where list continues', async () => {
    const files: Record<string, string | null> = { 'big/1': '', 'big/2': '', 'big/3': '', 'small/x': '', 'a.txt': '' }
    const h = setup({ files, config: { listMaxEntries: 5 } })
    const result = await tree(h, {})
    // big/ (3) does not fit after the 3 entries of the top; small/ (1) does.
    expect(result.text).toBe(
      listEnvelope(
        h.cwd,
        ['big/ (3 entries not shown)', 'small/', '  x', 'a.txt'],
        '(Showing 4 entries: 2 directories, 2 files. 3 more entries in 1 collapsed directory: pass it as path to see inside.)',
      ),
    )
    const wide = setup({ files: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, ''])), config: { listMaxEntries: 5 } })
    const cut = await tree(wide, {})
    expect(cut.text).toContain(
      '(Showing 5 entries: 0 directories, 5 files. 3 more entries directly in this directory: use the list tool with offset=6 to see them.)',
    )
    expect(cut.value).toMatchObject({ rootHidden: 3, hiddenEntries: 3 })
    // The list tool continues exactly where the tree stopped.
    expect((await wide.call('list', { offset: 6 })).text).toContain('\nf5.txt\nf6.txt\nf7.txt\n')
  })

  it('stops listing at 50 × listMaxEntries entries and says the tree may be incomplete', async () => {
    const files: Record<string, string> = {}
    for (let d = 0; d < 12; d++) for (let f = 0; f < 10; f++) files[`d${String(d).padStart(2, '0')}/f${f}`] = ''
    const h = setup({ files, config: { listMaxEntries: 2 } })
    const result = await tree(h, { depth: 1 })
    expect(result.value).toMatchObject({
      complete: false,
      stopped: expect.stringMatching(/^the listing stopped after \d+ entries \(the tree is too large\)$/) as unknown,
    })
    expect(result.text).toMatch(
      /The listing stopped after \d+ entries \(the tree is too large\), so directories may hold more than shown; narrow the path\.\)\n<\/content>$/,
    )
  })

  it('links: one to a directory inside is listed, never entered; one leading out is other, never followed', async () => {
    const h = setup({ files: { 'src/a.ts': '', 'to-src': { symlink: 'src' }, 'to-a': { symlink: 'src/a.ts' }, broken: { symlink: 'nowhere' } } })
    linkOut(h, 'out')
    linkOut(h, 'src/out2')
    const result = await tree(h, { depth: 5 })
    expect(result.text).toBe(
      listEnvelope(
        h.cwd,
        ['src/', '  a.ts', '  out2@', 'to-src/ (symbolic link, not entered)', 'to-a', 'broken@', 'out@'],
        '(7 entries: 2 directories, 2 files, 3 other)',
      ),
    )
    expect(result.text).not.toContain('secret')
    expect(result.text).not.toContain('deeper')
    expect(result.value?.entries.find((e) => e.path === 'to-src')).toEqual({ path: 'to-src', type: 'directory', depth: 1, state: 'link', hidden: 0 })
  })

  it('version-control directories are listed, never entered', async () => {
    const h = setup({ files: { '.git/HEAD': 'ref\n', '.git/objects/x': '', 'a.txt': '' } })
    const result = await tree(h, {})
    expect(result.text).toBe(listEnvelope(h.cwd, ['.git/ (version control, not entered)', 'a.txt'], '(2 entries: 1 directory, 1 file)'))
    expect(result.value?.entries[0]).toMatchObject({ state: 'not-entered' })
  })

  it('errors: not found, not a directory, outside the roots, a bad depth; nothing is observed', async () => {
    const h = setup({ files: { 'a.txt': 'hello\n' } })
    linkOut(h, 'out')
    expect(await h.call('tree', { path: 'nope' })).toMatchObject({
      isError: true,
      code: 'FS_NOT_FOUND',
      text: `Error: cannot list "${h.abs('nope')}": not found`,
    })
    expect(await h.call('tree', { path: 'a.txt' })).toMatchObject({ isError: true, code: 'FS_NOT_DIRECTORY' })
    for (const path of ['..', 'out', 'out/deeper', '/']) expect((await h.call('tree', { path })).code, path).toBe('FS_SANDBOX_DENIED')
    expect((await h.call('tree', { depth: 0 })).text).toBe('Error: depth must be a positive integer')
    expect((await h.call('tree', { depth: 21 })).text).toBe('Error: depth must be less than or equal to 20')
    expectOk(await h.call('tree', {}))
    expect((await h.call('edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'x' })).code).toBe('FS_NOT_OBSERVED')
  })

  it('a name that could forge a line is quoted, as list quotes it', async () => {
    const h = setup({ files: { 'd/a\nb': '', 'd/c@': '' } })
    expect((await tree(h, {})).text).toBe(listEnvelope(h.cwd, ['d/', '  "a\\nb"', '  "c@"'], '(3 entries: 1 directory, 2 files)'))
  })
})

describe('tree where a directory below cannot be listed', () => {
  /** A memory store that refuses to list `/w/locked`. */
  class Locked extends MemoryFileSystem {
    protected override listEntries(target: FsTarget): ReturnType<MemoryFileSystem['listEntries']> {
      const path = target.displayPath
      if (path === '/w/locked') throw new FsError('FS_PERMISSION_DENIED', `cannot list "${path}": permission denied`, { verb: 'list', path })
      return super.listEntries(target)
    }
  }

  it('shows what was listed, and says where and why the listing stopped', async () => {
    const fs = new Locked({ cwd: '/w', files: { 'a.txt': '', 'locked/x': '' } })
    const result = await createFileToolsByName({ fs }).tree.execute({})
    expect(result.isError, result.text).toBe(false)
    expect(result.text).toBe(
      listEnvelope(
        '/w',
        ['locked/', 'a.txt'],
        '(Showing 2 entries: 1 directory, 1 file. The listing stopped at an error (cannot list "/w/locked": permission denied), so directories may hold more than shown; narrow the path.)',
      ),
    )
    expect(result.value).toMatchObject({ complete: false, stopped: 'the listing stopped at an error (cannot list "/w/locked": permission denied)' })
  })
})

describe('tree on a store that does not answer', () => {
  /** A memory store whose tree listing never answers (core still honours the call's signal). */
  class Hanging extends MemoryFileSystem {
    protected override listSubtree(): Promise<never> {
      return new Promise<never>(() => undefined)
    }
  }

  it('stops at its time budget: a retryable FS_IO_ERROR when nothing was listed', async () => {
    const tools = createFileToolsByName({ fs: new Hanging({ cwd: '/w', files: { 'a.txt': '' } }), sandbox: false, config: { searchTimeoutMs: 100 } })
    const result = await tools.tree.execute({})
    expect(result).toMatchObject({ isError: true, code: 'FS_IO_ERROR', retryable: true })
    expect(result.text).toBe('Error: tree stopped after 100 ms: the store did not answer in time; try again later')
  })
})
