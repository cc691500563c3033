/**
 * Every path list, glob and grep print is one the model can pass back to `read` unchanged: each is
 * walked back through `read` (same call context) and must open the file it named. Every file's
 * content is unique (`id <workspace-relative path>`), so a path that opens a wrong file is caught.
 */
import { describe, expect, it } from 'vitest'
import type { GlobValue, GrepValue, ListValue, ReadValue, ToolContext } from '@seamfs/tools'
import { BACKENDS, withHarness, type Harness } from './tool-harness.js'

const FILES = ['top.txt', 'src/index.ts', 'src/a  b.ts', 'src/deep/x.ts', 'pkg/index.ts', 'pkg/src/index.ts', 'pkg/src/util/y.ts', 'other/z.ts']
const seeds = Object.fromEntries(FILES.map((f) => [f, `id ${f}\n`]))

/** The ids of the files below `dir` (workspace-relative, '' for all). */
function idsUnder(dir: string): string[] {
  return FILES.filter((f) => dir === '' || f.startsWith(`${dir}/`))
    .map((f) => `id ${f}`)
    .sort()
}

/** The first line `read` returns for `path` in `context`, failing when read fails. */
async function firstLine(h: Harness, path: string, context: ToolContext): Promise<string> {
  const r = await h.call('read', { file_path: path }, context)
  expect(r.isError, `read ${path}: ${r.text}`).toBe(false)
  return (r.value as ReadValue).lines[0]?.text ?? ''
}

/** Searches: `path` argument (undefined = none) and the workspace directory it names (for the expected set). */
interface Case {
  readonly cwd: string | undefined
  readonly path: string | undefined
  readonly dir: string
}

function cases(h: Harness): Case[] {
  return [
    { cwd: undefined, path: undefined, dir: '' },
    { cwd: undefined, path: 'src', dir: 'src' },
    { cwd: undefined, path: 'pkg/src', dir: 'pkg/src' },
    { cwd: undefined, path: h.abs('src/deep'), dir: 'src/deep' },
    { cwd: 'pkg', path: undefined, dir: 'pkg' },
    { cwd: 'pkg', path: 'src', dir: 'pkg/src' },
    { cwd: 'pkg', path: './src/util', dir: 'pkg/src/util' },
    { cwd: 'pkg', path: '../other', dir: 'other' },
    { cwd: 'pkg', path: '..', dir: '' },
    { cwd: h.abs('pkg/src'), path: h.abs('src'), dir: 'src' },
  ]
}

const contextOf = (c: Case): ToolContext => (c.cwd === undefined ? {} : { cwd: c.cwd })
const argsWith = (c: Case, args: Record<string, unknown>): Record<string, unknown> => (c.path === undefined ? args : { ...args, path: c.path })

describe.each(BACKENDS)('printed paths are reusable on %s', (kind) => {
  it('glob: every printed path reads back as the file it names', async () => {
    await withHarness(kind, { files: seeds }, async (h) => {
      for (const c of cases(h)) {
        const r = await h.call('glob', argsWith(c, { pattern: '**' }), contextOf(c))
        const paths = (r.value as GlobValue).paths
        expect(r.text, JSON.stringify(c)).toBe(paths.join('\n'))
        const ids = await Promise.all(paths.map((p) => firstLine(h, p, contextOf(c))))
        expect(ids.sort(), JSON.stringify(c)).toEqual(idsUnder(c.dir))
      }
    })
  })

  it('grep: every printed path reads back as the file whose line matched, also for a file root', async () => {
    await withHarness(kind, { files: seeds }, async (h) => {
      for (const c of cases(h)) {
        const r = await h.call('grep', argsWith(c, { pattern: '^id ' }), contextOf(c))
        const matches = (r.value as GrepValue).matches
        for (const m of matches) {
          expect(r.text).toContain(`\n${m.path}\nLine 1: ${m.text}`)
          expect(await firstLine(h, m.path, contextOf(c))).toBe(m.text)
        }
        expect(matches.map((m) => m.text).sort(), JSON.stringify(c)).toEqual(idsUnder(c.dir))
      }
      // A single file as the root, inside and outside the cwd.
      for (const [cwd, path, id] of [
        ['pkg', 'src/index.ts', 'id pkg/src/index.ts'],
        ['pkg', '../src/index.ts', 'id src/index.ts'],
      ] as const) {
        const m = ((await h.call('grep', { pattern: '^id ', path }, { cwd })).value as GrepValue).matches
        expect(m.map((x) => x.text)).toEqual([id])
        expect(await firstLine(h, m[0]?.path ?? '', { cwd })).toBe(id)
      }
    })
  })

  it('list: the listed directory joined with each file name reads back as that file', async () => {
    await withHarness(kind, { files: seeds }, async (h) => {
      for (const c of cases(h)) {
        const r = await h.call('list', c.path === undefined ? {} : { path: c.path }, contextOf(c))
        const value = r.value as ListValue
        expect(r.text.startsWith(`<path>${value.path}</path>`)).toBe(true)
        const files = value.entries.filter((e) => e.type === 'file')
        for (const e of files) expect(await firstLine(h, `${value.path}/${e.name}`, contextOf(c))).toBe(`id ${c.dir === '' ? '' : `${c.dir}/`}${e.name}`)
        expect(files.length).toBe(FILES.filter((f) => f.slice(0, f.lastIndexOf('/') + 1) === (c.dir === '' ? '' : `${c.dir}/`)).length)
      }
    })
  })

  it('prints cwd-relative paths inside the cwd and absolute ones outside it', async () => {
    await withHarness(kind, { files: seeds }, async (h) => {
      expect((await h.call('glob', { pattern: '*.ts', path: 'src/deep' })).text).toBe('src/deep/x.ts')
      expect((await h.call('glob', { pattern: '*.ts', path: 'src' }, { cwd: 'pkg' })).text).toBe('src/index.ts\nsrc/util/y.ts')
      expect((await h.call('glob', { pattern: '*.ts', path: '../other' }, { cwd: 'pkg' })).text).toBe(h.abs('other/z.ts'))
      expect(((await h.call('grep', { pattern: 'id', path: 'util' }, { cwd: 'pkg/src' })).value as GrepValue).matches[0]?.path).toBe('util/y.ts')
    })
  })
})

describe.each(BACKENDS)('search arguments the walk cannot honour, on %s', (kind) => {
  const files = { ...seeds, '.git/HEAD': 'id .git/HEAD\n', '.git/refs/main': 'x\n', 'a.js': 'id a.js\n' }

  it('refuses a comma list in include, suggesting braces; a comma inside braces is fine', async () => {
    await withHarness(kind, { files }, async (h) => {
      const comma = await h.call('grep', { pattern: 'id', include: '*.ts,*.js' })
      expect(comma).toEqual({ text: 'Error: include takes one glob, not a comma-separated list; use braces, like "*.{ts,js}"', isError: true })
      const mixed = await h.call('grep', { pattern: 'id', include: 'src/*.ts, *.js' })
      expect(mixed.text).toBe('Error: include takes one glob, not a comma-separated list; use braces, like "{src/*.ts,*.js}"')
      const braces = await h.call('grep', { pattern: 'id', include: '*.{ts,js}' })
      expect(braces.isError).toBe(false)
      expect((braces.value as GrepValue).matches.map((m) => m.path)).toContain('a.js')
      expect((braces.value as GrepValue).matches.map((m) => m.path)).toContain('src/index.ts')
      expect((await h.call('grep', { pattern: 'id', include: '*\\,x' })).isError).toBe(false)
    })
  })

  it('refuses a version-control directory as the search root, naming it', async () => {
    await withHarness(kind, { files }, async (h) => {
      expect(await h.call('grep', { pattern: 'id', path: '.git' })).toEqual({
        text: 'Error: cannot search ".git": it is inside a version-control directory (.git), and those are not searched',
        isError: true,
      })
      expect((await h.call('glob', { pattern: '*', path: '.git/refs' })).text).toBe(
        'Error: cannot search ".git/refs": it is inside a version-control directory (.git), and those are not searched',
      )
      expect((await h.call('grep', { pattern: 'id', path: '.git/HEAD' })).isError).toBe(true)
      expect((await h.call('glob', { pattern: '*', path: h.abs('.git') })).isError).toBe(true)
      // A workspace whose own path holds such a name is still searched.
      expect((await h.call('glob', { pattern: '*' }, { cwd: '.git/refs' })).text).toBe('main')
    })
  })
})
