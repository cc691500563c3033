import { expect } from 'vitest'
import type { FsEditRequest } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'

const edit = (oldString: string, newString: string, replaceAll = false): FsEditRequest => ({
  oldString,
  newString,
  replaceAll,
})

async function editAt(env: Env, path: string, request: FsEditRequest): Promise<void> {
  await env.fs.editText(await env.resolve(path), request)
}

export function editClauses(kit: Kit): void {
  kit.group('edit', {}, () => {
    kit.test('a unique match is replaced; the outcome has before/after and the next version', async (env) => {
      await env.write('e.txt', 'alpha beta gamma')
      const t = await env.resolve('e.txt')
      const outcome = await env.fs.editText(t, edit('beta', 'BETA'))
      expect(outcome.before).toBe('alpha beta gamma')
      expect(outcome.after).toBe('alpha BETA gamma')
      expect(await env.read('e.txt')).toBe('alpha BETA gamma')
      expect((await env.fs.stat(t))?.version).toBe(outcome.version)
    })

    kit.test('expected.version is checked before matching: stale is FS_STALE_VERSION, not a match error', async (env) => {
      const { version } = await env.write('e.txt', 'old text')
      await env.write('e.txt', 'new text')
      const t = await env.resolve('e.txt')
      expect(await codeOf(env.fs.editText(t, edit('absent', 'x'), { expected: { version } }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.editText(t, edit('text', 'x'), { expected: { version } }))).toBe('FS_STALE_VERSION')
      expect(await env.read('e.txt')).toBe('new text')
    })

    kit.test('a guarded edit at the current version succeeds', async (env) => {
      const { version } = await env.write('e.txt', 'one two')
      const t = await env.resolve('e.txt')
      await env.fs.editText(t, edit('two', '2'), { expected: { version } })
      expect(await env.read('e.txt')).toBe('one 2')
    })

    kit.test('a missing target is FS_STALE_VERSION, guarded or not', async (env) => {
      const { version } = await env.write('other.txt', 'x')
      const t = await env.resolve('missing.txt')
      expect(await codeOf(env.fs.editText(t, edit('x', 'y')))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.editText(t, edit('x', 'y'), { expected: { version } }))).toBe('FS_STALE_VERSION')
      expect(await env.fs.stat(t)).toBeUndefined()
    })

    kit.test('an empty oldString or no match is FS_EDIT_NOT_FOUND and changes nothing', async (env) => {
      await env.write('e.txt', 'content')
      expect(await codeOf(editAt(env, 'e.txt', edit('', 'x')))).toBe('FS_EDIT_NOT_FOUND')
      expect(await codeOf(editAt(env, 'e.txt', edit('nope', 'x')))).toBe('FS_EDIT_NOT_FOUND')
      expect(await env.read('e.txt')).toBe('content')
    })

    kit.test('several matches without replaceAll is FS_AMBIGUOUS_EDIT and changes nothing', async (env) => {
      await env.write('e.txt', 'x x x')
      expect(await codeOf(editAt(env, 'e.txt', edit('x', 'y')))).toBe('FS_AMBIGUOUS_EDIT')
      expect(await env.read('e.txt')).toBe('x x x')
    })

    kit.test('replaceAll replaces every non-overlapping match', async (env) => {
      await env.write('e.txt', 'aaa-aaa')
      await editAt(env, 'e.txt', edit('aa', 'b', true))
      expect(await env.read('e.txt')).toBe('ba-ba')
    })

    kit.test('$ in newString is literal', async (env) => {
      await env.write('e.txt', 'price: X')
      await editAt(env, 'e.txt', edit('X', "$& $$ $' $` $1"))
      expect(await env.read('e.txt')).toBe("price: $& $$ $' $` $1")
    })

    kit.test('an empty newString deletes the match', async (env) => {
      await env.write('e.txt', 'keep DROP keep')
      await editAt(env, 'e.txt', edit(' DROP', ''))
      expect(await env.read('e.txt')).toBe('keep keep')
    })

    kit.test('matching is on LF-normalized text, and a CRLF file keeps CRLF', async (env) => {
      await env.write('crlf.txt', 'one\r\ntwo\r\nthree\r\n')
      const t = await env.resolve('crlf.txt')
      const outcome = await env.fs.editText(t, edit('one\ntwo', 'uno\ndos\nmas'))
      expect(await env.read('crlf.txt')).toBe('uno\r\ndos\r\nmas\r\nthree\r\n')
      expect(outcome.before).toBe('one\ntwo\nthree\n')
      expect(outcome.after).toBe('uno\ndos\nmas\nthree\n')
    })

    kit.test('oldString with CRLF matches an LF file, and the file stays LF', async (env) => {
      await env.write('lf.txt', 'one\ntwo\n')
      await editAt(env, 'lf.txt', edit('one\r\ntwo', 'a\r\nb'))
      expect(await env.read('lf.txt')).toBe('a\nb\n')
    })

    kit.test('a directory is FS_NOT_REGULAR_FILE', async (env) => {
      await env.write('d/x.txt', 'x')
      expect(await codeOf(editAt(env, 'd', edit('x', 'y')))).toBe('FS_NOT_REGULAR_FILE')
    })
  })

  kit.group('edit: stored bytes', { hooks: ['writeBytes', 'readBytes'] }, () => {
    kit.test('a BOM stays on the store and is not part of before/after', async (env) => {
      await env.writeBytes('bom.txt', Uint8Array.from([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('hello')]))
      const outcome = await env.fs.editText(await env.resolve('bom.txt'), edit('hello', 'bye'))
      expect(outcome.before).toBe('hello')
      expect(outcome.after).toBe('bye')
      expect(Array.from(await env.readBytes('bom.txt'))).toEqual([0xef, 0xbb, 0xbf, 0x62, 0x79, 0x65])
    })

    kit.test('non-text content is FS_NOT_TEXT and unchanged', async (env) => {
      const bytes = Uint8Array.from([0x61, 0x00, 0x62])
      await env.writeBytes('bin.dat', bytes)
      expect(await codeOf(editAt(env, 'bin.dat', edit('a', 'b')))).toBe('FS_NOT_TEXT')
      await env.writeBytes('bad.txt', Uint8Array.from([0x61, 0xff]))
      expect(await codeOf(editAt(env, 'bad.txt', edit('a', 'b')))).toBe('FS_NOT_TEXT')
      expect(Array.from(await env.readBytes('bin.dat'))).toEqual([0x61, 0x00, 0x62])
    })
  })
}
