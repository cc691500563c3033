/**
 * glob and grep skip what `.gitignore` and `.ignore` files exclude, as git does (nested files, negations,
 * directory-only and anchored patterns, `**`, escapes), say so in a footer, and search it all with
 * `include_ignored: true`; an ignore file too large, unreadable or not a file never fails a search.
 * Through `createFileTools` (the tools as users drive them), on the memory and the local backend.
 */
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FsError, type FsTarget } from '@seamfs/core'
import type { Awaitable, ReadRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, type GlobValue, type GrepValue, type ToolResult } from '@seamfs/tools'
import { BACKENDS, expectOk, withHarness, type BackendKind, type Harness, type Seed } from './tool-harness.js'

const MAX = 64 * 1024

const glob = async (h: Harness, args: Record<string, unknown>): Promise<ToolResult<GlobValue>> =>
  (await h.call('glob', { pattern: '**/*', ...args })) as ToolResult<GlobValue>
const grep = async (h: Harness, args: Record<string, unknown>): Promise<ToolResult<GrepValue>> => (await h.call('grep', args)) as ToolResult<GrepValue>

/** The paths glob `**` finds, and those the ignore files made it skip. */
async function found(h: Harness, args: Record<string, unknown> = {}): Promise<{ paths: string[]; ignored: string[] }> {
  const r = await glob(h, args)
  expectOk(r)
  return { paths: r.value?.paths ?? [], ignored: r.value?.ignoredPaths ?? [] }
}

const run = <T>(kind: BackendKind, files: Readonly<Record<string, Seed>>, body: (h: Harness) => Promise<T>): Promise<T> => withHarness(kind, { files }, body)

describe.each(BACKENDS)('ignore files on %s', (kind) => {
  it('nested .gitignore files: a deeper one re-includes and excludes, for its directory only', async () => {
    const files = {
      '.gitignore': '*.log\nbuild/\n',
      'a.log': 'x\n',
      'secret.txt': 'x\n',
      'build/out.js': 'x\n',
      'src/.gitignore': '!keep.log\nsecret.txt\n',
      'src/app.ts': 'x\n',
      'src/keep.log': 'x\n',
      'src/other.log': 'x\n',
      'src/secret.txt': 'x\n',
      'src/build/gen.js': 'x\n',
    }
    await run(kind, files, async (h) => {
      const r = await glob(h, {})
      expect(r.value?.paths).toEqual(['.gitignore', 'secret.txt', 'src/.gitignore', 'src/app.ts', 'src/keep.log'])
      expect(r.value).toMatchObject({ totalPaths: 5, ignoredEntries: 5, ignoredPaths: ['a.log', 'build', 'src/build', 'src/other.log', 'src/secret.txt'] })
      expect(r.text).toBe(
        [
          '.gitignore',
          'secret.txt',
          'src/.gitignore',
          'src/app.ts',
          'src/keep.log',
          '',
          '(5 paths ignored by .gitignore or .ignore files skipped: "a.log", "build", "src/build", "src/other.log", "src/secret.txt"; set include_ignored to true to search them)',
        ].join('\n'),
      )
    })
  })

  it('negations: the last matching line wins, and nothing below an excluded directory comes back', async () => {
    const files = {
      '.gitignore': '*.txt\n!a.txt\nb.txt\n!b.txt\nc.txt\n!d.txt\nd.txt\nout/\n!out/keep.txt\nlogs/*\n!logs/keep.txt\n',
      'a.txt': 'x\n',
      'b.txt': 'x\n',
      'c.txt': 'x\n',
      'd.txt': 'x\n',
      'out/keep.txt': 'x\n',
      'logs/keep.txt': 'x\n',
      'logs/drop.txt': 'x\n',
    }
    await run(kind, files, async (h) => {
      expect(await found(h)).toEqual({ paths: ['.gitignore', 'a.txt', 'b.txt', 'logs/keep.txt'], ignored: ['c.txt', 'd.txt', 'logs/drop.txt', 'out'] })
    })
  })

  it('a trailing slash matches directories only; a leading or middle slash anchors to the file’s directory', async () => {
    const files = {
      '.gitignore': 'cache/\n/top.txt\ndoc/frotz\n',
      'cache/a.txt': 'x\n',
      'src/cache': 'a file named cache\n',
      'top.txt': 'x\n',
      'sub/top.txt': 'x\n',
      'doc/frotz': 'x\n',
      'a/doc/frotz': 'x\n',
      'sub/.gitignore': '/x.txt\n',
      'sub/x.txt': 'x\n',
      'sub/deeper/x.txt': 'x\n',
      'x.txt': 'x\n',
    }
    await run(kind, files, async (h) => {
      expect(await found(h)).toEqual({
        paths: ['.gitignore', 'a/doc/frotz', 'src/cache', 'sub/.gitignore', 'sub/deeper/x.txt', 'sub/top.txt', 'x.txt'],
        ignored: ['cache', 'doc/frotz', 'sub/x.txt', 'top.txt'],
      })
    })
  })

  it('** leading, trailing and in the middle', async () => {
    const files = {
      '.gitignore': '**/gen\nlogs/**\na/**/z.txt\n',
      'gen/1.js': 'x\n',
      'x/y/gen/2.js': 'x\n',
      'gen.js': 'x\n',
      'logs/a.txt': 'x\n',
      'logs/deep/b.txt': 'x\n',
      'a/z.txt': 'x\n',
      'a/b/c/z.txt': 'x\n',
      'b/a/z.txt': 'x\n',
    }
    await run(kind, files, async (h) => {
      const r = await glob(h, {})
      expect(r.value?.paths).toEqual(['.gitignore', 'b/a/z.txt', 'gen.js'])
      expect(r.value).toMatchObject({ ignoredEntries: 6, ignoredPaths: ['a/b/c/z.txt', 'a/z.txt', 'gen', 'logs/a.txt', 'logs/deep'] })
      expect(r.text.split('\n').at(-1)).toBe(
        '(6 paths ignored by .gitignore or .ignore files skipped: "a/b/c/z.txt", "a/z.txt", "gen", "logs/a.txt", "logs/deep" and 1 more; set include_ignored to true to search them)',
      )
    })
  })

  it('.ignore overrides .gitignore in its directory; a deeper file overrides both', async () => {
    const files = {
      '.gitignore': '*.txt\n',
      '.ignore': '!b.txt\nc.md\n',
      'a.txt': 'x\n',
      'b.txt': 'x\n',
      'c.md': 'x\n',
      'sub/.gitignore': '!c.md\n',
      'sub/b.txt': 'x\n',
      'sub/c.md': 'x\n',
    }
    await run(kind, files, async (h) => {
      expect(await found(h)).toEqual({ paths: ['.gitignore', '.ignore', 'b.txt', 'sub/.gitignore', 'sub/b.txt', 'sub/c.md'], ignored: ['a.txt', 'c.md'] })
    })
  })

  it('comments, blank lines, escapes, trailing spaces, CRLF lines and a BOM', async () => {
    const files = {
      '.gitignore': '\ufeff*.tmp\r\n# a comment\r\n\r\n\\#hash\r\n\\!bang\r\ntrail   \r\nkeep\\ \r\n',
      'x.tmp': 'x\n',
      '# a comment': 'x\n',
      '#hash': 'x\n',
      '!bang': 'x\n',
      trail: 'x\n',
      'keep ': 'x\n',
      keep: 'x\n',
    }
    await run(kind, files, async (h) => {
      expect(await found(h)).toEqual({ paths: ['# a comment', '.gitignore', 'keep'], ignored: ['!bang', '#hash', 'keep ', 'trail', 'x.tmp'] })
    })
  })

  it('character classes and ?', async () => {
    const files = {
      '.gitignore': '[ab].txt\n?.js\n[!a]*.md\n[[:digit:]]*\n[x-z]-\\[*\n',
      ...Object.fromEntries(['a.txt', 'b.txt', 'c.txt', 'x.js', 'xy.js', 'a.md', 'b.md', '1file', 'z1', 'y-[1]', 'w-[1]'].map((n) => [n, 'x\n'])),
    }
    await run(kind, files, async (h) => {
      expect(await found(h)).toEqual({
        paths: ['.gitignore', 'a.md', 'c.txt', 'w-[1]', 'xy.js', 'z1'],
        ignored: ['1file', 'a.txt', 'b.md', 'b.txt', 'x.js'],
      })
    })
  })

  it('include_ignored: true searches everything but version-control directories, in glob and in grep', async () => {
    const files = { '.gitignore': 'node_modules\n*.log\n', 'node_modules/m/i.js': 'TODO\n', 'a.log': 'TODO\n', 'src/a.ts': 'TODO\n', '.git/HEAD': 'TODO\n' }
    await run(kind, files, async (h) => {
      const all = await glob(h, { include_ignored: true })
      expect(all.value?.paths).toEqual(['.gitignore', 'a.log', 'node_modules/m/i.js', 'src/a.ts'])
      expect(all.value).not.toHaveProperty('ignoredEntries')
      expect(all.text).toBe('.gitignore\na.log\nnode_modules/m/i.js\nsrc/a.ts')
      expect((await glob(h, { include_ignored: false })).value?.paths).toEqual(['.gitignore', 'src/a.ts'])
      expect((await glob(h, { include_ignored: null })).value?.paths).toEqual(['.gitignore', 'src/a.ts'])

      const some = await grep(h, { pattern: 'TODO' })
      expect(some.text).toBe(
        'Found 1 match\n\nsrc/a.ts\nLine 1: TODO\n\n(2 paths ignored by .gitignore or .ignore files skipped: "a.log", "node_modules"; set include_ignored to true to search them)',
      )
      expect(some.value).toMatchObject({ totalMatches: 1, ignoredEntries: 2, ignoredPaths: ['a.log', 'node_modules'] })
      const every = await grep(h, { pattern: 'TODO', include_ignored: true })
      expect(every.value?.matches.map((m) => m.path)).toEqual(['a.log', 'node_modules/m/i.js', 'src/a.ts'])
      expect(every.text).not.toContain('ignored')
      expect((await grep(h, { pattern: 'TODO', include_ignored: 'yes' })).text).toBe('Error: include_ignored must be a boolean')
    })
  })

  it('counts an excluded file only where the search would have kept it; an excluded directory always', async () => {
    const files = { '.gitignore': '*.log\nvendor/\n', 'a.log': 'x\n', 'vendor/v.ts': 'x\n', 'src/a.ts': 'x\n' }
    await run(kind, files, async (h) => {
      const r = await glob(h, { pattern: '*.ts' })
      expect(r.value).toMatchObject({ paths: ['src/a.ts'], ignoredEntries: 1, ignoredPaths: ['vendor'] })
      expect(r.text).toBe('src/a.ts\n\n(1 path ignored by .gitignore or .ignore files skipped: "vendor"; set include_ignored to true to search it)')
      expect((await grep(h, { pattern: 'x', include: '*.ts' })).value).toMatchObject({ totalMatches: 1, ignoredEntries: 1, ignoredPaths: ['vendor'] })
      // Nothing excluded: no footer, no member.
      const clean = await glob(h, { pattern: '*.ts', path: 'src' })
      expect(clean.text).toBe('src/a.ts')
      expect(Object.keys(clean.value ?? {})).toEqual(['root', 'pattern', 'paths', 'totalPaths', 'fencedDirs', 'fencedPaths'])
    })
  })

  it("the search root is searched even when excluded; on this machine's disk, the ignore files from the workspace down to it apply below it", async () => {
    const files = {
      '.gitignore': 'dist/\n*.map\n',
      'dist/a.js': 'x\n',
      'dist/a.js.map': 'x\n',
      'packages/.gitignore': 'tmp\n',
      'packages/p/dist/b.js': 'x\n',
      'packages/p/tmp/t.js': 'x\n',
      'packages/p/src/c.js': 'x\n',
      'packages/p/src/c.js.map': 'x\n',
    }
    await run(kind, files, async (h) => {
      const r = await glob(h, { path: 'dist' })
      if (kind !== 'local') {
        // Not this machine's disk: the ignore files at and below the search root apply, none above it.
        expect(r.text).toBe('dist/a.js\ndist/a.js.map')
        expect(await found(h, { path: 'packages/p' })).toEqual({
          paths: ['packages/p/dist/b.js', 'packages/p/src/c.js', 'packages/p/src/c.js.map', 'packages/p/tmp/t.js'],
          ignored: [],
        })
        expect((await grep(h, { pattern: 'x', path: 'packages' })).value).toMatchObject({ totalMatches: 3, ignoredPaths: ['packages/p/tmp'] })
        return
      }
      expect(r.text).toBe('dist/a.js\n\n(1 path ignored by .gitignore or .ignore files skipped: "dist/a.js.map"; set include_ignored to true to search it)')
      expect(await found(h, { path: 'packages/p' })).toEqual({
        paths: ['packages/p/src/c.js'],
        ignored: ['packages/p/dist', 'packages/p/src/c.js.map', 'packages/p/tmp'],
      })
      expect(await found(h, { path: 'packages/p/src' })).toEqual({ paths: ['packages/p/src/c.js'], ignored: ['packages/p/src/c.js.map'] })
      expect((await grep(h, { pattern: 'x', path: 'packages' })).value).toMatchObject({
        totalMatches: 1,
        ignoredPaths: ['packages/p/dist', 'packages/p/src/c.js.map', 'packages/p/tmp'],
      })
      // A file named as the search root is searched whatever the rules.
      expect((await grep(h, { pattern: 'x', path: 'dist/a.js.map' })).value).toMatchObject({ totalMatches: 1 })
      expect((await grep(h, { pattern: 'x', path: 'dist/a.js.map' })).value).not.toHaveProperty('ignoredEntries')
    })
  })

  it('a search root outside the cwd reads no ignore file above it', async () => {
    const files = { '.gitignore': 'x.txt\n', 'other/x.txt': 'x\n', 'other/y.txt': 'x\n', 'sub/s.txt': 'x\n' }
    await run(kind, files, async (h) => {
      const inSub = (await h.call('glob', { pattern: '**/*', path: '../other' }, { cwd: h.abs('sub') })) as ToolResult<GlobValue>
      expect(inSub.value?.paths).toEqual([h.abs('other/x.txt'), h.abs('other/y.txt')])
      // From the workspace, the same directory is below it (however it is named): on this machine's disk the workspace's rules apply.
      const below = kind === 'local' ? ['other/y.txt'] : ['other/x.txt', 'other/y.txt']
      expect((await found(h, { path: 'other' })).paths).toEqual(below)
      expect((await found(h, { path: h.abs('other') })).paths).toEqual(below)
    })
  })

  it(`an ignore file over ${MAX} bytes is not applied, and the footer says so; one of exactly ${MAX} bytes is`, async () => {
    const pad = (head: string, size: number): string => `${head}#${'-'.repeat(size - head.length - 2)}\n`
    const files = { '.gitignore': pad('a.txt\n', MAX + 1), 'a.txt': 'x\n', 'ok/.gitignore': pad('b.txt\n', MAX), 'ok/b.txt': 'x\n', 'ok/c.txt': 'x\n' }
    await run(kind, files, async (h) => {
      const r = await glob(h, {})
      expect(r.value?.paths).toEqual(['.gitignore', 'a.txt', 'ok/.gitignore', 'ok/c.txt'])
      expect(r.value).toMatchObject({ ignoredPaths: ['ok/b.txt'], unappliedIgnoreFiles: 1, unappliedIgnorePaths: ['.gitignore'] })
      expect(r.text.split('\n').slice(-2)).toEqual([
        '(1 path ignored by .gitignore or .ignore files skipped: "ok/b.txt"; set include_ignored to true to search it)',
        `(1 ignore file not applied (over ${MAX} bytes, or unreadable): ".gitignore")`,
      ])
      // The one above the search root too, by its path in the workspace (on this machine's disk, where it is read).
      const inOk = (await glob(h, { path: 'ok' })).value
      expect(inOk).toMatchObject({ paths: ['ok/.gitignore', 'ok/c.txt'] })
      if (kind === 'local') expect(inOk).toMatchObject({ unappliedIgnorePaths: ['.gitignore'] })
      else expect(inOk).not.toHaveProperty('unappliedIgnorePaths')
      expect((await grep(h, { pattern: 'x' })).text.split('\n').at(-1)).toBe(`(1 ignore file not applied (over ${MAX} bytes, or unreadable): ".gitignore")`)
    })
  })

  it('an ignore file that is a directory, a broken link or not UTF-8 never fails the search', async () => {
    const files: Record<string, Seed> = {
      '.gitignore/x.txt': 'x\n',
      'sub/.ignore': { symlink: 'nowhere' },
      'sub/s.txt': 'x\n',
      'up/.ignore': null,
      'up/deeper/u.txt': 'x\n',
    }
    await run(kind, files, async (h) => {
      putBytes(h, 'bin/.gitignore', new Uint8Array([0xff, 0xfe, 0x80, 0x0a, ...new TextEncoder().encode('y.txt\n')]))
      h.put('bin/y.txt', 'x\n')
      h.put('bin/z.txt', 'x\n')
      const r = await glob(h, {})
      expectOk(r)
      expect(r.value?.paths).toEqual(['.gitignore/x.txt', 'bin/.gitignore', 'bin/z.txt', 'sub/s.txt', 'up/deeper/u.txt'])
      expect(r.value).toMatchObject({ ignoredPaths: ['bin/y.txt'] })
      expect(r.value).not.toHaveProperty('unappliedIgnoreFiles')
      // Above the root: a directory named like an ignore file is no ignore file.
      expect((await glob(h, { path: 'up/deeper' })).value).toMatchObject({ paths: ['up/deeper/u.txt'] })
      expect((await glob(h, { path: 'up/deeper' })).value).not.toHaveProperty('unappliedIgnoreFiles')
    })
  })

  // The memory store has no permissions, and root reads anything: the store that refuses, below, covers both.
  it.skipIf(kind !== 'local' || process.getuid?.() === 0)('an unreadable ignore file is skipped and named, never failing the search', async () => {
    await run(kind, { 'locked/.gitignore': 'a.txt\n', 'locked/a.txt': 'x\n' }, async (h) => {
      chmodSync(h.abs('locked/.gitignore'), 0o000)
      try {
        const r = await glob(h, {})
        expect(r.value).toMatchObject({ paths: ['locked/.gitignore', 'locked/a.txt'], unappliedIgnoreFiles: 1, unappliedIgnorePaths: ['locked/.gitignore'] })
      } finally {
        chmodSync(h.abs('locked/.gitignore'), 0o644)
      }
    })
  })
})

function putBytes(h: Harness, rel: string, bytes: Uint8Array): void {
  h.put(rel, '')
  if (h.kind === 'local') writeFileSync(join(h.cwd, rel), bytes)
  else (h.fs as MemoryFileSystem).volume.writeFileSync(h.abs(rel), bytes)
}

/** A store that refuses to read the ignore files under `locked/` (permissions) and `flaky/` (an I/O failure). */
class Refusing extends MemoryFileSystem {
  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    const path = target.displayPath
    if (path === '/w/locked/.gitignore') return Promise.reject(FsError.at('FS_PERMISSION_DENIED', 'read', path, 'permission denied'))
    if (path === '/w/flaky/.ignore') return Promise.reject(FsError.at('FS_IO_ERROR', 'read', path, 'connection reset', { retryable: true }))
    return super.loadBytes(target, request)
  }
}

describe('an ignore file the store refuses to read', () => {
  it('is not applied, named in the footer; the search goes on', async () => {
    const fs = new Refusing({
      cwd: '/w',
      files: {
        '.gitignore': 'r.txt\n',
        'r.txt': 'x\n',
        'locked/.gitignore': 'a.txt\n',
        'locked/a.txt': 'x\n',
        'flaky/.ignore': 'b.txt\n',
        'flaky/b.txt': 'x\n',
      },
    })
    const tools = createFileToolsByName({ fs })
    const r = await tools.glob.execute({ pattern: '*.txt' })
    expect(r.text).toBe(
      [
        'flaky/b.txt',
        'locked/a.txt',
        '',
        '(1 path ignored by .gitignore or .ignore files skipped: "r.txt"; set include_ignored to true to search it)',
        '(2 ignore files not applied (over 65536 bytes, or unreadable): "flaky/.ignore", "locked/.gitignore")',
      ].join('\n'),
    )
    expect(tools.glob.structured?.content(r.value as GlobValue)).toEqual({
      root: '/w',
      pattern: '*.txt',
      paths: ['flaky/b.txt', 'locked/a.txt'],
      totalPaths: 2,
      fencedDirs: 0,
      fencedPaths: [],
      ignoredEntries: 1,
      ignoredPaths: ['r.txt'],
      unappliedIgnoreFiles: 2,
      unappliedIgnorePaths: ['flaky/.ignore', 'locked/.gitignore'],
    })
    // (grep reads the ignore files too, as any file, when include lets them in.)
    const g = await tools.grep.execute({ pattern: 'x', include: '*.txt' })
    expect(g.value).toMatchObject({ totalMatches: 2, unappliedIgnoreFiles: 2, unappliedIgnorePaths: ['flaky/.ignore', 'locked/.gitignore'] })
  })
})
