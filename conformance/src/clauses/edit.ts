import { expect } from 'vitest'
import type { FsEditRequest } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'
import { expectSameBytes, utf8 } from './fixtures.js'

const edit = (oldString: string, newString: string, replaceAll = false): FsEditRequest => ({
  oldString,
  newString,
  replaceAll,
})

async function editAt(env: Env, path: string, request: FsEditRequest): Promise<void> {
  await env.fs.editText(await env.resolve(path), request)
}

/** Edit requests of the wrong types; each is `FS_EDIT_NOT_FOUND` before any I/O. */
const MALFORMED: ReadonlyArray<readonly [string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['a string', 'old'],
  ['an array', ['old', 'new']],
  ['an empty object', {}],
  ['no newString', { oldString: 'old', replaceAll: false }],
  ['no oldString', { newString: 'new', replaceAll: false }],
  ['a null oldString', { oldString: null, newString: 'new', replaceAll: false }],
  ['a number oldString', { oldString: 1, newString: 'new', replaceAll: false }],
  ['a String object oldString', { oldString: new String('old'), newString: 'new', replaceAll: false }],
  ['a String object newString', { oldString: 'old', newString: new String('new'), replaceAll: false }],
  ['an array newString', { oldString: 'old', newString: ['new'], replaceAll: false }],
  ['a string replaceAll', { oldString: 'old', newString: 'new', replaceAll: 'true' }],
  ['a number replaceAll', { oldString: 'old', newString: 'new', replaceAll: 1 }],
  ['a null replaceAll', { oldString: 'old', newString: 'new', replaceAll: null }],
  ['an empty oldString', { oldString: '', newString: 'new', replaceAll: false }],
]

/** Stored bytes where the backend exposes them, else the text (returned as stored); `label` names the check. */
async function expectStored(kit: Kit, env: Env, path: string, text: string, label: string): Promise<void> {
  expect(await env.read(path), label).toBe(text)
  if (kit.unmet({ hooks: ['readBytes'] }) === undefined) expectSameBytes(await env.readBytes(path), utf8(text), label)
}

export function editClauses(kit: Kit): void {
  kit.group('edit', { writes: true }, () => {
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

    kit.test('a list of edits is applied in order in one step; before is the file as read, after the text after the last', async (env) => {
      await env.write('m.txt', 'alpha beta gamma\n')
      const t = await env.resolve('m.txt')
      // The second edit matches only what the first one wrote: order matters.
      const outcome = await env.fs.editText(t, [edit('beta', 'BETA'), edit('BETA gamma', 'delta'), edit('a', 'A', true)])
      expect(outcome.before).toBe('alpha beta gamma\n')
      expect(outcome.after).toBe('AlphA deltA\n')
      expect(await env.read('m.txt')).toBe('AlphA deltA\n')
      expect((await env.fs.stat(t))?.version).toBe(outcome.version)
    })

    kit.test('a failing edit of a list writes nothing and is named (details.edit, "edit N of M")', async (env) => {
      const { version } = await env.write('m.txt', 'one two two three')
      const t = await env.resolve('m.txt')
      const cases: ReadonlyArray<readonly [FsEditRequest[], string, number]> = [
        [[edit('one', '1'), edit('absent', 'x')], 'FS_EDIT_NOT_FOUND', 1],
        [[edit('one', '1'), edit('three', '3'), edit('two', '2')], 'FS_AMBIGUOUS_EDIT', 2],
        [[edit('missing', 'x'), edit('one', '1')], 'FS_EDIT_NOT_FOUND', 0],
        // The first edit removes what the second looks for: it fails on the text the first one left.
        [[edit('one ', ''), edit('one', '1')], 'FS_EDIT_NOT_FOUND', 1],
      ]
      for (const [edits, code, index] of cases) {
        const err = await env.fs.editText(t, edits).then(
          () => undefined,
          (e: unknown) => e as { code?: string; details?: { edit?: number }; message?: string },
        )
        expect(err?.code, JSON.stringify(edits)).toBe(code)
        expect(err?.details?.edit).toBe(index)
        expect(err?.message).toContain(`edit ${index + 1} of ${edits.length}`)
        expect(await env.read('m.txt')).toBe('one two two three')
        expect((await env.fs.stat(t))?.version).toBe(version)
      }
    })

    kit.test('an empty list of edits, or more than 1,000, is FS_EDIT_NOT_FOUND before any I/O', async (env) => {
      await env.write('m.txt', 'x')
      const missing = await env.resolve('missing.txt')
      const many = Array.from({ length: 1001 }, () => edit('x', 'y'))
      // On a missing file: a request refused before any I/O is never FS_STALE_VERSION.
      expect(await codeOf(env.fs.editText(missing, []))).toBe('FS_EDIT_NOT_FOUND')
      expect(await codeOf(env.fs.editText(missing, many))).toBe('FS_EDIT_NOT_FOUND')
      expect(await codeOf(env.fs.editText(await env.resolve('m.txt'), [edit('x', 'y'), { oldString: '', newString: 'z', replaceAll: false }]))).toBe(
        'FS_EDIT_NOT_FOUND',
      )
      expect(await env.read('m.txt')).toBe('x')
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

  kit.group('edit: shapes', { writes: true }, () => {
    kit.test('$ in newString is literal, also with replaceAll', async (env) => {
      await env.write('e.txt', 'a X b X\r\nc X')
      const t = await env.resolve('e.txt')
      const outcome = await env.fs.editText(t, edit('X', "[$& $1 $$ $` $' $<n>]", true))
      const literal = "[$& $1 $$ $` $' $<n>]"
      expect(outcome.after).toBe(`a ${literal} b ${literal}\nc ${literal}`)
      expect(await env.read('e.txt')).toBe(`a ${literal} b ${literal}\r\nc ${literal}`)
    })

    kit.test('untouched text keeps its bytes in a file with mixed line endings', async (env) => {
      const text = 'one\r\ntwo\nthree\rfour\r\nfive\n\r\nsix'
      await env.write('mixed.txt', text)
      const t = await env.resolve('mixed.txt')
      const outcome = await env.fs.editText(t, edit('three', 'THREE'))
      expect(outcome.before).toBe('one\ntwo\nthree\rfour\nfive\n\nsix')
      await expectStored(kit, env, 'mixed.txt', text.replace('three', 'THREE'), 'one match')
      await env.fs.editText(t, edit('o', '0', true))
      await expectStored(kit, env, 'mixed.txt', text.replace('three', 'THREE').replaceAll('o', '0'), 'replaceAll')
      await env.fs.editText(t, edit('tw0\nTHREE', 'two-three'))
      await expectStored(kit, env, 'mixed.txt', '0ne\r\ntwo-three\rf0ur\r\nfive\n\r\nsix', 'a match across a line ending')
    })

    kit.test('inserted text takes the dominant line ending of a mixed file: CRLF on a CRLF majority', async (env) => {
      // The first line ends in LF: the majority decides, not the first ending.
      await env.write('crlf.txt', 'a\nb\r\nc\r\nd\r\n')
      const outcome = await env.fs.editText(await env.resolve('crlf.txt'), edit('c', 'x\ny\r\nz'))
      expect(outcome.after).toBe('a\nb\nx\ny\nz\nd\n')
      await expectStored(kit, env, 'crlf.txt', 'a\nb\r\nx\r\ny\r\nz\r\nd\r\n', 'CRLF majority')
    })

    kit.test('inserted text takes the dominant line ending of a mixed file: LF on an LF majority', async (env) => {
      // The first line ends in CRLF: one CRLF does not make the file CRLF.
      await env.write('lf.txt', 'a\r\nb\nc\nd\n')
      const outcome = await env.fs.editText(await env.resolve('lf.txt'), edit('c', 'x\r\ny\nz'))
      expect(outcome.after).toBe('a\nb\nx\ny\nz\nd\n')
      await expectStored(kit, env, 'lf.txt', 'a\r\nb\nx\ny\nz\nd\n', 'LF majority')
    })

    // Content is stored as given, and a read drops one leading BOM: a U+FEFF that an edit puts
    // at the start of a BOM-less file is stored as its UTF-8 bytes (no second BOM is added, the
    // character is not dropped), and from then on reads as the file's BOM.
    kit.test('a U+FEFF edited in at the start of a BOM-less file is stored as given, and reads as a BOM', async (env) => {
      await env.write('plain.txt', 'hello')
      const t = await env.resolve('plain.txt')
      const outcome = await env.fs.editText(t, edit('hello', '\uFEFFhello'))
      expect(outcome.before).toBe('hello')
      expect(await env.read('plain.txt')).toBe('hello')
      if (kit.unmet({ hooks: ['readBytes'] }) === undefined) {
        expect(Array.from(await env.readBytes('plain.txt'))).toEqual([0xef, 0xbb, 0xbf, ...utf8('hello')])
      }
      expect((await env.fs.editText(t, edit('hello', 'bye'))).before).toBe('hello')
      expect(await env.read('plain.txt')).toBe('bye')
    })

    kit.test('an edit of a BOM-less file adds no BOM, and a U+FEFF behind a BOM stays text', async (env) => {
      await env.write('plain.txt', 'hello')
      await editAt(env, 'plain.txt', edit('hello', 'bye'))
      await expectStored(kit, env, 'plain.txt', 'bye', 'a BOM-less file')
      await env.write('bom.txt', '\uFEFFhello')
      await editAt(env, 'bom.txt', edit('hello', '\uFEFFhi'))
      expect(await env.read('bom.txt')).toBe('\uFEFFhi')
      if (kit.unmet({ hooks: ['readBytes'] }) === undefined) {
        expect(Array.from(await env.readBytes('bom.txt'))).toEqual([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, ...utf8('hi')])
      }
    })

    kit.test('a malformed request (wrong types) is FS_EDIT_NOT_FOUND before any I/O, and changes nothing', async (env) => {
      const { version } = await env.write('e.txt', 'old text')
      const t = await env.resolve('e.txt')
      const missing = await env.resolve('missing.txt')
      for (const [label, request] of MALFORMED) {
        expect(await codeOf(env.fs.editText(t, request as FsEditRequest)), label).toBe('FS_EDIT_NOT_FOUND')
        expect(await codeOf(env.fs.editText(t, request as FsEditRequest, { expected: { version } })), `${label}, guarded`).toBe('FS_EDIT_NOT_FOUND')
        // Before any I/O: a missing file would be FS_STALE_VERSION.
        expect(await codeOf(env.fs.editText(missing, request as FsEditRequest)), `${label}, missing file`).toBe('FS_EDIT_NOT_FOUND')
      }
      expect(await env.read('e.txt')).toBe('old text')
      expect((await env.fs.stat(t))?.version).toBe(version)
      expect(await env.names()).toEqual(['e.txt'])
    })

    kit.test('a malformed expected (not { version: string }) is FS_UNSUPPORTED before any I/O', async (env) => {
      const { version } = await env.write('e.txt', 'old text')
      const t = await env.resolve('e.txt')
      const missing = await env.resolve('missing.txt')
      for (const expected of [null, 'v', {}, { version: 42 }, { version: null }, { kind: 'replaceIfVersion', version: 42 }]) {
        const shown = JSON.stringify(expected)
        expect(await codeOf(env.fs.editText(t, edit('old', 'new'), { expected: expected as never })), shown).toBe('FS_UNSUPPORTED')
        expect(await codeOf(env.fs.editText(missing, edit('old', 'new'), { expected: expected as never })), `${shown}, missing file`).toBe('FS_UNSUPPORTED')
      }
      expect(await env.read('e.txt')).toBe('old text')
      expect((await env.fs.stat(t))?.version).toBe(version)
    })
  })

  kit.group('edit: stored bytes', { writes: true, hooks: ['writeBytes', 'readBytes'] }, () => {
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
