import { posix } from 'node:path'
import { expect } from 'vitest'
import { isFsError, type FsTarget } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'

/**
 * Names a URL must percent-encode, or may leave as they are, without changing what it names:
 * spaces, `%` (also before non-hex), `#`, `?`, non-ASCII in both normal forms, `\`, and
 * `</x>` (a directory `<` holding `x>`).
 */
const URL_NAMES: readonly string[] = [
  'a b.txt',
  'a%20b.txt',
  '100%.txt',
  '%zz',
  'a#b.txt',
  'a?b=c.txt',
  '🐂🍺中文.docx',
  '\u00f1.txt',
  'n\u0303.txt',
  "a  b !@#$%^&()_+-=;',.txt",
  'a:b@c.txt',
  'a\\b.txt',
  '<x>&amp;"q".txt',
  '[x]{y}|^`~.txt',
  '</x>',
]

function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname)
  } catch {
    return `<not percent-decodable: ${url.pathname}>`
  }
}

/** The absolute form of `path` (relative to the filesystem's cwd), built from the cwd's displayPath. */
async function absoluteOf(env: Env, path: string): Promise<string> {
  const cwd = (await env.resolve('.')).displayPath
  expect(posix.isAbsolute(cwd), `the displayPath of "." (${cwd}) is absolute`).toBe(true)
  return cwd.endsWith('/') ? `${cwd}${path}` : `${cwd}/${path}`
}

/** resolve / processPath / fileUrl / contains, and stat / lstat. */
export function identityClauses(kit: Kit): void {
  kit.group('resolve/identity', {}, () => {
    kit.test('a relative path resolves against opts.cwd (itself relative to the backend cwd)', async (env) => {
      await env.write('dir/a.txt', 'in dir')
      const viaCwd = await env.fs.resolve('a.txt', { cwd: 'dir' })
      expect(viaCwd.targetKey).toBe((await env.resolve('dir/a.txt')).targetKey)
      expect(await env.fs.readText(viaCwd)).toBe('in dir')
    })

    kit.test('. and .. aliases of one file share a targetKey', async (env) => {
      await env.write('dir/sub/a.txt', 'x')
      const plain = await env.resolve('dir/sub/a.txt')
      const alias = await env.resolve('dir/./other/../sub/a.txt')
      expect(alias.targetKey).toBe(plain.targetKey)
    })

    kit.test('a missing path resolves, with the same key before and after creation', async (env) => {
      const before = await env.resolve('new/dir/file.txt')
      await env.write('new/dir/file.txt', 'created')
      const after = await env.resolve('new/dir/file.txt')
      expect(after.targetKey).toBe(before.targetKey)
      expect(await env.fs.readText(after)).toBe('created')
    })

    kit.test('resolving a displayPath again yields the same targetKey', async (env) => {
      await env.write('d/x.txt', 'x')
      for (const path of ['d/x.txt', 'd', 'd/missing/y.txt', '.']) {
        const first = await env.resolve(path)
        expect((await env.fs.resolve(first.displayPath)).targetKey).toBe(first.targetKey)
      }
    })

    kit.test('.. at the root stays at the root, as in POSIX: /.., /../x and a relative path climbing past the root resolve like /, /x', async (env) => {
      await env.write('r.txt', 'r')
      const key = async (path: string): Promise<string> =>
        env.fs.resolve(path).then(
          (t) => t.targetKey,
          (err: unknown) => (isFsError(err) ? err.code : String(err)),
        )
      const home = (await env.resolve('.')).displayPath
      const depth = home.split('/').filter((p) => p !== '').length
      const r = posix.relative('/', posix.join(home, 'r.txt'))
      expect(await key('/..'), '/..').toBe(await key('/'))
      expect(await key('/../..'), '/../..').toBe(await key('/'))
      expect(await key(`/../${r}`), `/../${r}`).toBe(await key(`/${r}`))
      expect(await key(`${'../'.repeat(depth + 2)}${r}`), 'a relative path climbing past the root').toBe(await key(`/${r}`))
    })

    kit.test('a blank path is FS_NOT_FOUND', async (env) => {
      expect(await codeOf(env.fs.resolve(''))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.resolve('  \t'))).toBe('FS_NOT_FOUND')
    })

    kit.test('a path through a regular file is FS_NOT_FOUND', async (env) => {
      await env.write('file.txt', 'x')
      expect(await codeOf(env.fs.resolve('file.txt/child.txt'))).toBe('FS_NOT_FOUND')
    })

    kit.test('contains: a directory contains itself and its descendants, not a sibling sharing a prefix', async (env) => {
      const [a, ab, deep, sibling] = await Promise.all(['a', 'a/b', 'a/b/c.txt', 'ab/c.txt'].map((p) => env.resolve(p)))
      if (a === undefined || ab === undefined || deep === undefined || sibling === undefined) throw new Error('unreachable')
      expect(env.fs.contains(a, a)).toBe(true)
      expect(env.fs.contains(a, deep)).toBe(true)
      expect(env.fs.contains(ab, deep)).toBe(true)
      expect(env.fs.contains(ab, a)).toBe(false)
      expect(env.fs.contains(a, sibling)).toBe(false)
    })

    kit.test('processPath is absolute when capabilities.processPath, else FS_UNSUPPORTED', async (env) => {
      const target = await env.resolve('p.txt')
      if (env.fs.capabilities.processPath) {
        expect(env.fs.processPath(target).startsWith('/')).toBe(true)
      } else {
        expect(await codeOf(async () => env.fs.processPath(target))).toBe('FS_UNSUPPORTED')
      }
    })

    kit.test('fileUrl percent-encodes: hostile names round-trip through new URL, and distinct names give distinct URLs', async (env) => {
      const names = env.fs.capabilities.newlineInNames ? [...URL_NAMES, 'new\nline.txt'] : URL_NAMES
      const hrefs = new Set<string>()
      for (const name of names) {
        const url = env.fs.fileUrl(await env.resolve(`u/${name}`))
        let parsed: URL | undefined
        expect(() => (parsed = new URL(url)), `new URL(${JSON.stringify(url)})`).not.toThrow()
        if (parsed === undefined) continue
        expect(parsed.href, `${JSON.stringify(name)}: new URL(u).href is u`).toBe(url)
        expect(parsed.search + parsed.hash, `${JSON.stringify(name)}: nothing left over as query or fragment`).toBe('')
        expect(decodedPath(parsed).endsWith(`/u/${name}`), `${JSON.stringify(name)}: the decoded pathname ${decodedPath(parsed)} ends with it`).toBe(true)
        hrefs.add(parsed.href)
      }
      expect(hrefs.size, 'distinct URLs for distinct names').toBe(names.length)
      expect([...hrefs][0]).toMatch(/^[a-z][a-z0-9+.-]*:/)
    })

    kit.test('contains: every target contains itself (a file, a directory, the root, a missing path, an alias, a copy)', async (env) => {
      await env.write('d/f.txt', 'x')
      const paths = ['d/f.txt', 'd', '.', 'd/missing/deeper.txt', 'd/../d/./f.txt']
      const targets = await Promise.all(paths.map((p) => env.resolve(p)))
      const [file, dir, root, , alias] = targets as [FsTarget, FsTarget, FsTarget, FsTarget, FsTarget]
      for (const t of targets) {
        expect(env.fs.contains(t, t), `contains(${t.displayPath}, itself)`).toBe(true)
        expect(env.fs.contains({ ...t }, { ...t }), `contains of two copies of ${t.displayPath}`).toBe(true)
        expect(env.fs.contains(root, t), `the root contains ${t.displayPath}`).toBe(true)
      }
      expect(env.fs.contains(alias, file)).toBe(true)
      expect(env.fs.contains(file, alias)).toBe(true)
      expect(env.fs.contains(file, root)).toBe(false)
      expect(env.fs.contains(file, dir)).toBe(false)
    })

    kit.test('an absolute path ignores opts.cwd, and an absolute opts.cwd is used as is (resolve and lstat)', async (env) => {
      await env.write('dir/a.txt', 'abc')
      await env.write('other/b.txt', 'b')
      const key = (await env.resolve('dir/a.txt')).targetKey
      const abs = await absoluteOf(env, 'dir/a.txt')
      expect((await env.fs.resolve(abs, { cwd: 'other' })).targetKey).toBe(key)
      expect((await env.fs.resolve(abs, { cwd: abs })).targetKey).toBe(key)
      expect((await env.fs.lstat(abs, { cwd: 'other' }))?.size).toBe(3)
      const absDir = await absoluteOf(env, 'dir')
      expect((await env.fs.resolve('a.txt', { cwd: absDir })).targetKey).toBe(key)
      expect((await env.fs.lstat('a.txt', { cwd: absDir }))?.size).toBe(3)
      expect((await env.fs.resolve('../other/b.txt', { cwd: absDir })).targetKey).toBe((await env.resolve('other/b.txt')).targetKey)
    })

    kit.test('a NUL byte or a lone surrogate is FS_NOT_FOUND, also in opts.cwd (resolve and lstat)', async (env) => {
      for (const bad of ['a\0b', 'a\uD800', 'a\uDC00b']) {
        expect(await codeOf(env.fs.resolve(bad)), `resolve(${JSON.stringify(bad)})`).toBe('FS_NOT_FOUND')
        expect(await codeOf(env.fs.lstat(bad)), `lstat(${JSON.stringify(bad)})`).toBe('FS_NOT_FOUND')
        expect(await codeOf(env.fs.resolve('x.txt', { cwd: bad })), `resolve with cwd ${JSON.stringify(bad)}`).toBe('FS_NOT_FOUND')
        expect(await codeOf(env.fs.lstat('x.txt', { cwd: bad })), `lstat with cwd ${JSON.stringify(bad)}`).toBe('FS_NOT_FOUND')
      }
    })
  })

  kit.group('resolve/identity: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('a symlink and its target share a targetKey', async (env) => {
      await env.write('real/file.txt', 'x')
      await env.symlink('link.txt', 'real/file.txt')
      expect((await env.resolve('link.txt')).targetKey).toBe((await env.resolve('real/file.txt')).targetKey)
    })

    kit.test('aliases through a symlinked parent directory share a targetKey (existing and missing files)', async (env) => {
      await env.write('real/sub/f.txt', 'x')
      await env.symlink('alias', 'real')
      await env.symlink('deep/up', '../real/sub')
      await env.symlink('chain', 'alias')
      const key = (await env.resolve('real/sub/f.txt')).targetKey
      for (const path of ['alias/sub/f.txt', 'deep/up/f.txt', 'chain/sub/f.txt']) expect((await env.resolve(path)).targetKey, path).toBe(key)
      const missing = (await env.resolve('real/sub/new.txt')).targetKey
      for (const path of ['alias/sub/new.txt', 'deep/up/new.txt', 'chain/sub/new.txt']) expect((await env.resolve(path)).targetKey, path).toBe(missing)
      expect(env.fs.contains(await env.resolve('real'), await env.resolve('alias/sub/f.txt'))).toBe(true)
      // Where the store writes: a file created through an alias lands at the key resolve gave it.
      if (kit.unmet({ writes: true }) !== undefined) return
      await env.fs.writeText(await env.resolve('deep/up/new.txt'), 'through the alias')
      expect(await env.read('real/sub/new.txt')).toBe('through the alias')
      expect((await env.resolve('chain/sub/new.txt')).targetKey).toBe(missing)
    })
  })

  kit.group('stat/lstat', {}, () => {
    kit.test('stat of an absent target is undefined', async (env) => {
      expect(await env.fs.stat(await env.resolve('absent.txt'))).toBeUndefined()
      expect(await env.fs.stat(await env.resolve('absent/deeper.txt'))).toBeUndefined()
    })

    kit.test('stat of a file: type file, size in bytes', async (env) => {
      await env.write('f.txt', 'héllo 中')
      const info = await env.fs.stat(await env.resolve('f.txt'))
      expect(info?.type).toBe('file')
      expect(info?.size).toBe(new TextEncoder().encode('héllo 中').length)
    })

    kit.test('stat of a directory: type directory', async (env) => {
      await env.write('d/x.txt', 'x')
      expect((await env.fs.stat(await env.resolve('d')))?.type).toBe('directory')
    })

    kit.test('lstat: absent is undefined, file and directory are reported as such', async (env) => {
      await env.write('d/x.txt', 'xyz')
      expect(await env.fs.lstat('nothing')).toBeUndefined()
      expect((await env.fs.lstat('d'))?.type).toBe('directory')
      const file = await env.fs.lstat('d/x.txt')
      expect(file?.type).toBe('file')
      expect(file?.size).toBe(3)
      // What lstat says of a file that is no link is what stat says: its size in bytes, its version.
      await env.write('d/é中.txt', 'é中🐂\r\n')
      const wide = await env.fs.lstat('d/é中.txt')
      const stat = await env.fs.stat(await env.resolve('d/é中.txt'))
      expect([wide?.type, wide?.size, wide?.version], 'lstat of a file with multi-byte content, against stat').toEqual([stat?.type, stat?.size, stat?.version])
    })

    kit.test('lstat: a blank path is FS_NOT_FOUND', async (env) => {
      expect(await codeOf(env.fs.lstat(' '))).toBe('FS_NOT_FOUND')
    })

    kit.test("lstat: path text and cwd follow resolve's rules (a relative path resolves against opts.cwd)", async (env) => {
      await env.write('dir/a.txt', 'abc')
      const viaCwd = await env.fs.lstat('a.txt', { cwd: 'dir' })
      expect(viaCwd?.type).toBe('file')
      expect(viaCwd?.size).toBe(3)
      expect((await env.fs.lstat('../dir/./a.txt', { cwd: 'dir' }))?.size).toBe(3)
      expect((await env.fs.lstat('.', { cwd: 'dir' }))?.type).toBe('directory')
      expect(await env.fs.lstat('a.txt'), 'a.txt at the filesystem cwd, not under dir').toBeUndefined()
      expect(await env.fs.lstat('dir', { cwd: 'dir' }), 'dir/dir').toBeUndefined()
    })

    kit.test('stat of a path through a regular file is undefined (the parent became a file after resolve)', async (env) => {
      const target = await env.resolve('p/child.txt')
      await env.write('p', 'now a file')
      expect(await env.fs.stat(target)).toBeUndefined()
      expect(await env.fs.lstat('p/child.txt')).toBeUndefined()
    })

    kit.test('lstat: a path through a regular file is undefined (absent), as for stat', async (env) => {
      await env.write('f.txt', 'x')
      expect(await env.fs.lstat('f.txt/inner')).toBeUndefined()
      expect(await env.fs.lstat('f.txt/inner/deeper.txt')).toBeUndefined()
    })
  })

  kit.group('stat/lstat: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('lstat reports a symlink; stat follows it', async (env) => {
      await env.write('target.txt', 'abcd')
      await env.symlink('link', 'target.txt')
      expect((await env.fs.lstat('link'))?.type).toBe('symlink')
      const followed = await env.fs.stat(await env.resolve('link'))
      expect(followed?.type).toBe('file')
      expect(followed?.size).toBe(4)
    })

    kit.test('lstat: a path through a link loop is undefined (absent); the link itself is a symlink', async (env) => {
      await env.symlink('loop-a', 'loop-b')
      await env.symlink('loop-b', 'loop-a')
      expect((await env.fs.lstat('loop-a'))?.type).toBe('symlink')
      expect(await env.fs.lstat('loop-a/x.txt')).toBeUndefined()
      expect(await env.fs.lstat('loop-b/deeper/x.txt')).toBeUndefined()
    })

    kit.test('stat of a link loop is undefined; lstat follows symlinked parents and reports only a final link', async (env) => {
      const target = await env.resolve('loop-a')
      await env.symlink('loop-a', 'loop-b')
      await env.symlink('loop-b', 'loop-a')
      expect(await env.fs.stat(target)).toBeUndefined()
      await env.write('real/f.txt', 'abc')
      await env.symlink('alias', 'real')
      expect((await env.fs.lstat('alias'))?.type).toBe('symlink')
      expect((await env.fs.lstat('alias/f.txt'))?.type).toBe('file')
      expect((await env.fs.lstat('f.txt', { cwd: 'alias' }))?.size).toBe(3)
    })

    kit.test('stat of a broken symlink is undefined', async (env) => {
      await env.symlink('broken', 'nowhere.txt')
      expect(await env.fs.stat(await env.resolve('broken'))).toBeUndefined()
      expect((await env.fs.lstat('broken'))?.type).toBe('symlink')
    })
  })
}
