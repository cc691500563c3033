import { expect } from 'vitest'
import { codeOf, type Kit } from '../kit.js'

/** `createDirectory`: idempotent, parents included, visible while empty on every store that declares it. */
export function directoryClauses(kit: Kit): void {
  kit.group('createDirectory', { caps: ['createDirectory'] }, () => {
    kit.test('createDirectory creates the directory and its missing parents: stat says directory, it lists empty, the parent lists it', async (env) => {
      const outcome = await env.fs.createDirectory(await env.resolve('a/b/c'))
      expect(outcome).toEqual({ created: true })
      expect((await env.fs.stat(await env.resolve('a/b/c')))?.type).toBe('directory')
      expect((await env.fs.stat(await env.resolve('a')))?.type).toBe('directory')
      expect(await env.names('a/b/c')).toEqual([])
      expect(await env.names('a/b')).toEqual(['c'])
      expect((await env.fs.listDir(await env.resolve('a/b')))[0]?.type).toBe('directory')
    })

    kit.test('createDirectory of an existing directory is created: false and changes nothing', async (env) => {
      await env.write('d/f.txt', 'f')
      const version = (await env.fs.stat(await env.resolve('d/f.txt')))?.version
      expect(await env.fs.createDirectory(await env.resolve('d'))).toEqual({ created: false })
      await env.fs.createDirectory(await env.resolve('e'))
      expect(await env.fs.createDirectory(await env.resolve('e'))).toEqual({ created: false })
      expect(await env.names('d')).toEqual(['f.txt'])
      expect((await env.fs.stat(await env.resolve('d/f.txt')))?.version).toBe(version)
    })

    kit.test('a file at the path or on the way is FS_NOT_DIRECTORY, and nothing changes', async (env) => {
      const { version } = await env.write('f.txt', 'f')
      expect(await codeOf(env.fs.createDirectory(await env.resolve('f.txt')))).toBe('FS_NOT_DIRECTORY')
      const below = await env.fs.resolve('f.txt/sub').then(
        (target) => codeOf(env.fs.createDirectory(target)),
        () => 'FS_NOT_DIRECTORY',
      )
      expect(below, 'a path through a file may fail in resolve (FS_NOT_FOUND) or in createDirectory').toMatch(/FS_NOT_DIRECTORY|FS_NOT_FOUND/)
      // A parent that became a file after resolve reaches the store: the file stays a file.
      const late = await env.resolve('g.txt/sub')
      const { version: gVersion } = await env.write('g.txt', 'g')
      expect(await codeOf(env.fs.createDirectory(late)), 'a parent that became a file after resolve').toMatch(/FS_NOT_DIRECTORY|FS_NOT_FOUND/)
      expect(await env.read('g.txt')).toBe('g')
      expect((await env.fs.stat(await env.resolve('g.txt')))?.version).toBe(gVersion)
      expect(await env.read('f.txt')).toBe('f')
      expect((await env.fs.stat(await env.resolve('f.txt')))?.version).toBe(version)
      expect(await env.names()).toEqual(['f.txt', 'g.txt'])
    })

    kit.test('createDirectory with an aborted signal is FS_ABORTED and creates nothing', async (env) => {
      const controller = new AbortController()
      controller.abort(new Error('aborted by the test'))
      expect(await codeOf(env.fs.createDirectory(await env.resolve('x'), { signal: controller.signal }))).toBe('FS_ABORTED')
      expect(await env.names()).toEqual([])
    })
  })

  kit.group('createDirectory: with remove', { caps: ['createDirectory', 'remove'] }, () => {
    kit.test('a created directory stays listed after its last file is removed', async (env) => {
      await env.fs.createDirectory(await env.resolve('kept'))
      await env.write('kept/f.txt', 'f')
      await env.fs.remove(await env.resolve('kept/f.txt'))
      expect(await env.names()).toEqual(['kept'])
      expect(await env.names('kept')).toEqual([])
    })
  })
}
