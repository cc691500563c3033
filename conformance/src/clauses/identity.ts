import { expect } from 'vitest'
import { codeOf, type Kit } from '../kit.js'

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
      await env.fs.writeText(before, 'created')
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

    kit.test('fileUrl is a URI with a scheme, distinct per file', async (env) => {
      const a = env.fs.fileUrl(await env.resolve('a b.txt'))
      const b = env.fs.fileUrl(await env.resolve('a%20b.txt'))
      expect(a).toMatch(/^[a-z][a-z0-9+.-]*:/)
      expect(a).not.toBe(b)
    })
  })

  kit.group('resolve/identity: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('a symlink and its target share a targetKey', async (env) => {
      await env.write('real/file.txt', 'x')
      await env.symlink('link.txt', 'real/file.txt')
      expect((await env.resolve('link.txt')).targetKey).toBe((await env.resolve('real/file.txt')).targetKey)
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
    })

    kit.test('lstat: a blank path is FS_NOT_FOUND', async (env) => {
      expect(await codeOf(env.fs.lstat(' '))).toBe('FS_NOT_FOUND')
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

    kit.test('stat of a broken symlink is undefined', async (env) => {
      await env.symlink('broken', 'nowhere.txt')
      expect(await env.fs.stat(await env.resolve('broken'))).toBeUndefined()
      expect((await env.fs.lstat('broken'))?.type).toBe('symlink')
    })
  })
}
