/**
 * Golden tests: every envelope, footer and message of list/read/write/edit as
 * an exact full string (the texts README.md documents), on the memory and the
 * local backend. Display paths are absolute, so the strings interpolate the cwd.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import type { ReadValue } from '@seamfs/tools'
import {
  BACKENDS,
  expectError,
  expectOk,
  listEnvelope,
  makeHarness,
  parseEnvelope,
  readEnvelope,
  withHarness,
  type BackendKind,
  type Harness,
  type HarnessOptions,
} from './tool-harness.js'

describe.each(BACKENDS)('golden texts on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  afterEach(() => {
    harness?.dispose()
    harness = undefined
  })
  const setup = (options: HarnessOptions = {}): Harness => (harness = makeHarness(kind, options))

  describe('list', () => {
    it('an empty directory, at offset 1, is just the footer', async () => {
      const h = setup({ files: { e: null } })
      expect(expectOk(await h.call('list', { path: 'e' }))).toBe(listEnvelope(h.abs('e'), [], '(Empty directory)'))
      expect(expectOk(await h.call('list', { path: 'e', offset: 1 }))).toBe(listEnvelope(h.abs('e'), [], '(Empty directory)'))
    })

    it('singular and plural composition', async () => {
      const h = setup({
        files: { one: null, 'one/f': 'x', two: null, 'two/d': null, 'two/f': 'x', many: null, 'many/d1': null, 'many/d2': null, 'many/f1': '', 'many/f2': '' },
      })
      expect(expectOk(await h.call('list', { path: 'one' }))).toBe(listEnvelope(h.abs('one'), ['f'], '(1 entry: 0 directories, 1 file)'))
      expect(expectOk(await h.call('list', { path: 'two' }))).toBe(listEnvelope(h.abs('two'), ['d/', 'f'], '(2 entries: 1 directory, 1 file)'))
      expect(expectOk(await h.call('list', { path: 'many' }))).toBe(
        listEnvelope(h.abs('many'), ['d1/', 'd2/', 'f1', 'f2'], '(4 entries: 2 directories, 2 files)'),
      )
    })

    it('defaults to the workspace; markers / and @; ", N other"; symlinks typed by what they point to', async () => {
      const h = setup({ files: { sub: null, 'f.txt': 'x', 'to-dir': { symlink: 'sub' }, 'to-file': { symlink: 'f.txt' }, broken: { symlink: 'nowhere' } } })
      const expected = listEnvelope(h.cwd, ['sub/', 'to-dir/', 'f.txt', 'to-file', 'broken@'], '(5 entries: 2 directories, 2 files, 1 other)')
      expect(expectOk(await h.call('list', {}))).toBe(expected)
      expect(expectOk(await h.call('list', undefined))).toBe(expected)
      expect(expectOk(await h.call('list', { path: '.', offset: null }))).toBe(expected)
      const value = (await h.call('list', {})).value
      expect(value).toEqual({
        path: h.cwd,
        offset: 1,
        entries: [
          { name: 'sub', type: 'directory' },
          { name: 'to-dir', type: 'directory' },
          { name: 'f.txt', type: 'file' },
          { name: 'to-file', type: 'file' },
          { name: 'broken', type: 'other' },
        ],
        totalEntries: 5,
        counts: { directories: 2, files: 2, other: 1 },
      })
    })

    it('orders directories, files, other, each by code point (not locale, not UTF-16)', async () => {
      const names = ['b', 'B', 'a', '\uFFFD', '😀', '10', '9', '_']
      const files: Record<string, string | null | { symlink: string }> = { z: null, A: null, 'y-link': { symlink: 'nope' }, 'c-link': { symlink: 'nope' } }
      for (const n of names) files[n] = n
      const h = setup({ files })
      expect(expectOk(await h.call('list', {}))).toBe(
        listEnvelope(h.cwd, ['A/', 'z/', '10', '9', 'B', '_', 'a', 'b', '\uFFFD', '😀', 'c-link@', 'y-link@'], '(12 entries: 2 directories, 8 files, 2 other)'),
      )
    })

    it('quotes a name that could forge the listing, and only such a name', async () => {
      const h = setup({
        files: {
          q: null,
          'q/dir@': null,
          'q/"q': '',
          'q/a\nb': '',
          'q/at@': '',
          'q/back\\slash': '',
          'q/ls\u2028x': '',
          'q/lt<': '',
          'q/mid@dle': '',
          'q/plain': '',
          'q/tab\tx': '',
          'q/link@': { symlink: 'nowhere' },
        },
      })
      const body = [
        String.raw`"dir@"/`,
        String.raw`"\"q"`,
        String.raw`"a\nb"`,
        String.raw`"at@"`,
        String.raw`"back\\slash"`,
        String.raw`"ls\u2028x"`,
        'lt<',
        'mid@dle',
        'plain',
        String.raw`"tab\tx"`,
        String.raw`"link@"@`,
      ]
      expect(expectOk(await h.call('list', { path: 'q' }))).toBe(listEnvelope(h.abs('q'), body, '(11 entries: 1 directory, 9 files, 1 other)'))
    })

    it('quotes a path holding </ and neutralizes it', async () => {
      const h = setup({ files: { 'x<': null, 'x</y': null, 'x</y/f': '' } })
      expect(expectOk(await h.call('list', { path: 'x</y' }))).toBe(listEnvelope(`"${h.cwd}/x<\\/y"`, ['f'], '(1 entry: 0 directories, 1 file)'))
    })

    it('pages with the default cap: 1-200 of 250 with the next offset, then the final page without it', async () => {
      const files: Record<string, string | null> = {}
      const dirs = Array.from({ length: 50 }, (_, i) => `d${String(i).padStart(3, '0')}`)
      const names = Array.from({ length: 200 }, (_, i) => `f${String(i).padStart(3, '0')}`)
      for (const d of dirs) files[`big/${d}`] = null
      for (const f of names) files[`big/${f}`] = ''
      const h = setup({ files })
      const all = [...dirs.map((d) => `${d}/`), ...names]
      expect(expectOk(await h.call('list', { path: 'big' }))).toBe(
        listEnvelope(h.abs('big'), all.slice(0, 200), '(Showing entries 1-200 of 250: 50 directories, 200 files. Use offset=201 to continue.)'),
      )
      expect(expectOk(await h.call('list', { path: 'big', offset: 201 }))).toBe(
        listEnvelope(h.abs('big'), all.slice(200), '(Showing entries 201-250 of 250: 50 directories, 200 files.)'),
      )
    })

    it('pages with a small cap; an offset past the end is out of range', async () => {
      const h = setup({ config: { listMaxEntries: 3 }, files: { d: null, 'd/x': null, 'd/y': null, 'd/a': '', 'd/b': '', 'd/c': '', 'd/l': { symlink: '0' } } })
      const comp = '2 directories, 3 files, 1 other'
      expect(expectOk(await h.call('list', { path: 'd' }))).toBe(
        listEnvelope(h.abs('d'), ['x/', 'y/', 'a'], `(Showing entries 1-3 of 6: ${comp}. Use offset=4 to continue.)`),
      )
      expect(expectOk(await h.call('list', { path: 'd', offset: 2 }))).toBe(
        listEnvelope(h.abs('d'), ['y/', 'a', 'b'], `(Showing entries 2-4 of 6: ${comp}. Use offset=5 to continue.)`),
      )
      expect(expectOk(await h.call('list', { path: 'd', offset: 4 }))).toBe(listEnvelope(h.abs('d'), ['b', 'c', 'l@'], `(Showing entries 4-6 of 6: ${comp}.)`))
      expect(expectOk(await h.call('list', { path: 'd', offset: 6 }))).toBe(listEnvelope(h.abs('d'), ['l@'], `(Showing entries 6-6 of 6: ${comp}.)`))
      expectError(await h.call('list', { path: 'd', offset: 7 }), `Error: offset 7 is out of range for "${h.abs('d')}" (6 entries)`, 'FS_NOT_FOUND')
      const value = (await h.call('list', { path: 'd', offset: 5 })).value
      expect(value).toMatchObject({
        offset: 5,
        entries: [
          { name: 'c', type: 'file' },
          { name: 'l', type: 'other' },
        ],
        totalEntries: 6,
      })
    })

    it('an empty directory has no offset 2; missing and non-directory targets', async () => {
      const h = setup({ files: { e: null, 'f.txt': 'x' } })
      expectError(await h.call('list', { path: 'e', offset: 2 }), `Error: offset 2 is out of range for "${h.abs('e')}" (0 entries)`, 'FS_NOT_FOUND')
      expectError(await h.call('list', { path: 'nope' }), `Error: cannot list "${h.abs('nope')}": not found`, 'FS_NOT_FOUND')
      expectError(await h.call('list', { path: 'f.txt' }), `Error: cannot list "${h.abs('f.txt')}": not a directory`, 'FS_NOT_DIRECTORY')
    })
  })

  describe('read', () => {
    const three = { 'a.txt': 'one\ntwo\nthree\n' }

    it('end of file, more lines, and a window in the middle', async () => {
      const h = setup({ files: three })
      const p = h.abs('a.txt')
      expect(expectOk(await h.call('read', { file_path: 'a.txt' }))).toBe(readEnvelope(p, ['1: one', '2: two', '3: three'], '(End of file - total 3 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'a.txt', limit: 2 }))).toBe(
        readEnvelope(p, ['1: one', '2: two'], '(Showing lines 1-2 of 3. Use offset=3 to continue.)'),
      )
      expect(expectOk(await h.call('read', { file_path: p, offset: 2, limit: 1 }))).toBe(
        readEnvelope(p, ['2: two'], '(Showing lines 2-2 of 3. Use offset=3 to continue.)'),
      )
      expect(expectOk(await h.call('read', { file_path: 'a.txt', offset: 3, limit: 2000 }))).toBe(
        readEnvelope(p, ['3: three'], '(End of file - total 3 lines)'),
      )
      expect((await h.call('read', { file_path: 'a.txt', offset: 2 })).value).toEqual({
        path: p,
        offset: 2,
        lines: [
          { number: 2, text: 'two' },
          { number: 3, text: 'three' },
        ],
        totalLines: 3,
      })
    })

    it('one line is still "lines"; an empty file is 0 lines and offset 1 is fine; offsets past the end fail', async () => {
      const h = setup({ files: { ...three, e: '', one: 'solo' } })
      expect(expectOk(await h.call('read', { file_path: 'one' }))).toBe(readEnvelope(h.abs('one'), ['1: solo'], '(End of file - total 1 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'e' }))).toBe(readEnvelope(h.abs('e'), [], '(End of file - total 0 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'e', offset: 1, limit: 1 }))).toBe(readEnvelope(h.abs('e'), [], '(End of file - total 0 lines)'))
      expectError(await h.call('read', { file_path: 'e', offset: 2 }), `Error: offset 2 is out of range for "${h.abs('e')}" (0 lines)`, 'FS_NOT_FOUND')
      expectError(await h.call('read', { file_path: 'a.txt', offset: 4 }), `Error: offset 4 is out of range for "${h.abs('a.txt')}" (3 lines)`, 'FS_NOT_FOUND')
      expectError(
        await h.call('read', { file_path: 'a.txt', offset: 99 }),
        `Error: offset 99 is out of range for "${h.abs('a.txt')}" (3 lines)`,
        'FS_NOT_FOUND',
      )
    })

    it('capped by bytes (UTF-8 bytes, plus one per separating newline)', async () => {
      const exact = `0123456\n${'0123456789\n'.repeat(4)}`
      const h = setup({ config: { readMaxBytes: 40 }, files: { ascii: '0123456789\n'.repeat(5), accents: 'ééééé\n'.repeat(5), exact } })
      // 10 + 11 + 11 = 32; a fourth line would make 43 > 40
      const ten = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}: 0123456789`)
      expect(expectOk(await h.call('read', { file_path: 'ascii' }))).toBe(
        readEnvelope(h.abs('ascii'), ten(1, 3), '(Output capped. Showing lines 1-3. Use offset=4 to continue.)'),
      )
      expect(expectOk(await h.call('read', { file_path: 'ascii', offset: 3 }))).toBe(readEnvelope(h.abs('ascii'), ten(3, 5), '(End of file - total 5 lines)'))
      const acc = ['2: ééééé', '3: ééééé', '4: ééééé']
      expect(expectOk(await h.call('read', { file_path: 'accents', offset: 2 }))).toBe(
        readEnvelope(h.abs('accents'), acc, '(Output capped. Showing lines 2-4. Use offset=5 to continue.)'),
      )
      // 7 + 3 × 11 = 40: exactly at the cap still fits; a limit that stops first wins over the cap
      const upTo4 = ['1: 0123456', ...ten(2, 4)]
      expect(expectOk(await h.call('read', { file_path: 'exact' }))).toBe(
        readEnvelope(h.abs('exact'), upTo4, '(Output capped. Showing lines 1-4. Use offset=5 to continue.)'),
      )
      expect(expectOk(await h.call('read', { file_path: 'exact', limit: 4 }))).toBe(
        readEnvelope(h.abs('exact'), upTo4, '(Showing lines 1-4 of 5. Use offset=5 to continue.)'),
      )
    })

    it('long lines are truncated with a suffix naming the cap', async () => {
      const h = setup({ config: { readMaxLineLength: 5 }, files: { l: 'abcdefgh\nabcde\nabcdef\r\nabcde\r\n' } })
      expect(expectOk(await h.call('read', { file_path: 'l' }))).toBe(
        readEnvelope(
          h.abs('l'),
          ['1: abcde... (line truncated to 5 chars)', '2: abcde', '3: abcde... (line truncated to 5 chars)', '4: abcde'],
          '(End of file - total 4 lines)',
        ),
      )
    })

    it('lines: a trailing newline adds none, a blank line counts, one \\r is stripped per line', async () => {
      const h = setup({ files: { two: 'a\n\n', bare: 'x\ny', crlf: 'a\r\nb\r\r\np\rq\r\nc\r' } })
      expect(expectOk(await h.call('read', { file_path: 'two' }))).toBe(readEnvelope(h.abs('two'), ['1: a', '2: '], '(End of file - total 2 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'bare' }))).toBe(readEnvelope(h.abs('bare'), ['1: x', '2: y'], '(End of file - total 2 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'crlf' }))).toBe(
        readEnvelope(h.abs('crlf'), ['1: a', '2: b\r', '3: p\rq', '4: c'], '(End of file - total 4 lines)'),
      )
    })

    it('a directory, a missing file, a binary file', async () => {
      const h = setup({ files: { d: null, bin: 'a\0b' } })
      expectError(await h.call('read', { file_path: 'd' }), `Error: cannot read "${h.abs('d')}": not a regular file`, 'FS_NOT_REGULAR_FILE')
      expectError(await h.call('read', { file_path: 'gone.txt' }), `Error: cannot read "${h.abs('gone.txt')}": not found`, 'FS_NOT_FOUND')
      expectError(await h.call('read', { file_path: 'bin' }), `Error: cannot read "${h.abs('bin')}": binary file`, 'FS_NOT_TEXT')
    })

    it('quotes a path with a backslash, a newline or </ in the envelope and in messages', async () => {
      const h = setup({ files: { 'b\\s': 'x', 'n\nl': 'y', 'x<': null, 'x</f': 'z' } })
      expect(expectOk(await h.call('read', { file_path: 'b\\s' }))).toBe(readEnvelope(`"${h.cwd}/b\\\\s"`, ['1: x'], '(End of file - total 1 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'n\nl' }))).toBe(readEnvelope(`"${h.cwd}/n\\nl"`, ['1: y'], '(End of file - total 1 lines)'))
      expect(expectOk(await h.call('read', { file_path: 'x</f' }))).toBe(readEnvelope(`"${h.cwd}/x<\\/f"`, ['1: z'], '(End of file - total 1 lines)'))
      expectError(await h.call('read', { file_path: 'mi\\ss' }), `Error: cannot read "${h.cwd}/mi\\\\ss": not found`, 'FS_NOT_FOUND')
      expectError(await h.call('read', { file_path: 'b\\s', offset: 3 }), `Error: offset 3 is out of range for "${h.cwd}/b\\\\s" (1 lines)`, 'FS_NOT_FOUND')
    })
  })

  describe('write and edit', () => {
    it('write: the five-line Created / Updated envelope (no policy: unconditional)', async () => {
      const h = setup({ files: { sub: null } })
      const p = h.abs('sub/n.txt')
      const created = await h.call('write', { file_path: 'sub/n.txt', content: 'hi\n' })
      expect(expectOk(created)).toBe(`<path>${p}</path>\n<type>file</type>\n<content>\nCreated file\n</content>`)
      expect(created.value).toEqual({ path: p, operation: 'create', before: null, after: 'hi\n', diff: null, dryRun: false })
      const updated = await h.call('write', { file_path: p, content: '' })
      expect(expectOk(updated)).toBe(`<path>${p}</path>\n<type>file</type>\n<content>\nUpdated file\n\n@@ -1 +0,0 @@\n-hi\n</content>`)
      expect(updated.value).toEqual({ path: p, operation: 'update', before: 'hi\n', after: '', diff: '@@ -1 +0,0 @@\n-hi', dryRun: false })
      expect(h.peek('sub/n.txt')).toBe('')
      const odd = await h.call('write', { file_path: 'new\nline', content: 'x' })
      expect(expectOk(odd)).toBe(`<path>"${h.cwd}/new\\nline"</path>\n<type>file</type>\n<content>\nCreated file\n</content>`)
    })

    it('edit: both sentences', async () => {
      const h = setup({ files: { 'e.txt': 'a b a c a\n' } })
      const p = h.abs('e.txt')
      const one = await h.call('edit', { file_path: 'e.txt', old_string: 'b', new_string: 'B' })
      expect(expectOk(one)).toBe(`The file ${p} has been updated successfully.\n\n@@ -1 +1 @@\n-a b a c a\n+a B a c a`)
      expect(one.value).toEqual({ path: p, before: 'a b a c a\n', after: 'a B a c a\n', diff: '@@ -1 +1 @@\n-a b a c a\n+a B a c a', dryRun: false })
      const all = await h.call('edit', { file_path: 'e.txt', old_string: 'a', new_string: 'Z', replace_all: true })
      expect(expectOk(all)).toBe(`The file ${p} has been updated. All occurrences were successfully replaced.\n\n@@ -1 +1 @@\n-a B a c a\n+Z B Z c Z`)
      expect(h.peek('e.txt')).toBe('Z B Z c Z\n')
      const ambiguous = await h.call('edit', { file_path: 'e.txt', old_string: 'Z', new_string: 'a', replace_all: false })
      expect(ambiguous).toMatchObject({ isError: true, code: 'FS_AMBIGUOUS_EDIT' })
      expect(ambiguous.text).toBe(`Error: old_string matched 3 times in "${p}"; provide a more specific old_string or set replace_all to true`)
      expectError(
        await h.call('edit', { file_path: 'e.txt', old_string: 'nope', new_string: 'x' }),
        `Error: old_string was not found in "${p}"`,
        'FS_EDIT_NOT_FOUND',
      )
      expect(h.peek('e.txt')).toBe('Z B Z c Z\n')
    })
  })

  describe('validation messages (no code, nothing touched)', () => {
    const cases: Array<[tool: string, args: unknown, message: string]> = [
      ['read', {}, 'file_path must be a non-empty string'],
      ['read', { file_path: '' }, 'file_path must be a non-empty string'],
      ['read', { file_path: '  \t' }, 'file_path must be a non-empty string'],
      ['read', { file_path: 7 }, 'file_path must be a non-empty string'],
      ['write', { content: 'x' }, 'file_path must be a non-empty string'],
      ['edit', { file_path: '', old_string: 'a', new_string: 'b' }, 'file_path must be a non-empty string'],
      ['list', { path: '' }, 'path must be a non-empty string when given'],
      ['list', { path: ' ' }, 'path must be a non-empty string when given'],
      ['list', { path: 3 }, 'path must be a non-empty string when given'],
      ['list', { offset: 0 }, 'offset must be a positive integer'],
      ['read', { file_path: 'a.txt', offset: 0 }, 'offset must be a positive integer'],
      ['read', { file_path: 'a.txt', offset: -1 }, 'offset must be a positive integer'],
      ['read', { file_path: 'a.txt', offset: 1.5 }, 'offset must be a positive integer'],
      ['read', { file_path: 'a.txt', offset: '2' }, 'offset must be a positive integer'],
      ['read', { file_path: 'a.txt', offset: Number.NaN }, 'offset must be a positive integer'],
      ['read', { file_path: null }, 'file_path must be a non-empty string'],
      ['read', { file_path: 'a.txt', lines: 5 }, 'unknown argument "lines" (allowed: file_path, offset, limit)'],
      ['write', { file_path: 'a.txt', content: 'x', mode: '0644', owner: 'me' }, 'unknown arguments "mode", "owner" (allowed: file_path, content, dryRun)'],
      ['write', { content: 'x', path: 'a.txt' }, 'unknown argument "path" (allowed: file_path, content, dryRun); file_path must be a non-empty string'],
      ['read', { file_path: 'a.txt', limit: 0 }, 'limit must be a positive integer'],
      ['read', { file_path: 'a.txt', limit: Number.POSITIVE_INFINITY }, 'limit must be a positive integer'],
      ['read', { file_path: 'a.txt', limit: 2001 }, 'limit must be less than or equal to 2000'],
      ['edit', { file_path: 'a.txt', old_string: '', new_string: 'x' }, 'old_string must be a non-empty string when given'],
      ['edit', { file_path: 'a.txt', new_string: 'x' }, 'edit needs old_string and new_string, or edits (a list of {old_string, new_string, replace_all})'],
      ['edit', { file_path: 'a.txt', old_string: 'x' }, 'edit needs old_string and new_string, or edits (a list of {old_string, new_string, replace_all})'],
      ['edit', { file_path: 'a.txt' }, 'edit needs old_string and new_string, or edits (a list of {old_string, new_string, replace_all})'],
      [
        'edit',
        { file_path: 'a.txt', old_string: 'a', new_string: 'b', edits: [{ old_string: 'c', new_string: 'd' }] },
        'edit takes either old_string/new_string/replace_all or edits, not both (given: old_string, new_string and edits)',
      ],
      [
        'edit',
        { file_path: 'a.txt', replace_all: true, edits: [{ old_string: 'c', new_string: 'd' }] },
        'edit takes either old_string/new_string/replace_all or edits, not both (given: replace_all and edits)',
      ],
      ['edit', { file_path: 'a.txt', edits: [] }, 'edits must be a non-empty list of at most 100 objects when given'],
      // Both forms: told so before the shape of either (an empty or malformed list beside old_string).
      [
        'edit',
        { file_path: 'a.txt', old_string: 'a', new_string: 'b', edits: [] },
        'edit takes either old_string/new_string/replace_all or edits, not both (given: old_string, new_string and edits)',
      ],
      [
        'edit',
        { file_path: 'a.txt', old_string: 'a', edits: 'x' },
        'edit takes either old_string/new_string/replace_all or edits, not both (given: old_string and edits)',
      ],
      [
        'edit',
        { file_path: 'a.txt', old_string: null, new_string: null, replace_all: null, edits: [] },
        'edits must be a non-empty list of at most 100 objects when given',
      ],
      ['edit', { file_path: 'a.txt', edits: [{ old_string: 'a', new_string: 'b' }, 'x'] }, 'edits[1] must be an object'],
      [
        'edit',
        {
          file_path: 'a.txt',
          edits: [
            { old_string: '', new_string: 'b', oops: 1 },
            { new_string: 'b', replace_all: 'yes' },
          ],
        },
        'edits[0]: unknown argument "oops" (allowed: old_string, new_string, replace_all); edits[0].old_string must be a non-empty string; edits[1].old_string must be a non-empty string; edits[1].replace_all must be a boolean',
      ],
      [
        'edit',
        {
          file_path: 'a.txt',
          edits: [
            { old_string: 'a', new_string: 'b' },
            { old_string: 's', new_string: 's' },
          ],
        },
        'edits[1].old_string and edits[1].new_string must differ',
      ],
      ['edit', { file_path: 'a.txt', old_string: 'same', new_string: 'x', dryRun: 'yes' }, 'dryRun must be a boolean'],
      ['edit', { file_path: 'a.txt', old_string: 'same', new_string: 'same' }, 'old_string and new_string must differ'],
      ['read', null, 'arguments must be an object'],
      ['write', ['a.txt', 'x'], 'arguments must be an object'],
    ]
    it.each(cases)('%s %j → Error: %s', async (tool, args, message) => {
      const h = setup({ files: { 'a.txt': 'same\n' } })
      expectError(await h.call(tool, args), `Error: ${message}`)
      expect(h.peek('a.txt')).toBe('same\n')
    })

    it('the limit cap follows readLimit', async () => {
      const h = setup({ config: { readLimit: 5 }, files: { 'a.txt': '1\n2\n3\n4\n5\n6\n' } })
      expectError(await h.call('read', { file_path: 'a.txt', limit: 6 }), 'Error: limit must be less than or equal to 5')
      expect(expectOk(await h.call('read', { file_path: 'a.txt' }))).toBe(
        readEnvelope(h.abs('a.txt'), ['1: 1', '2: 2', '3: 3', '4: 4', '5: 5'], '(Showing lines 1-5 of 6. Use offset=6 to continue.)'),
      )
    })
  })
})

/** Follows read footers from offset 1 to the end; returns every numbered line seen, in order. */
async function readWalk(h: Harness, path: string, limit: number): Promise<{ texts: string[]; total: number }> {
  const texts: string[] = []
  let offset = 1
  for (let step = 0; step < 10_000; step++) {
    const result = await h.call('read', { file_path: path, offset, limit })
    const { body, footer, type } = parseEnvelope(expectOk(result))
    expect(type).toBe('file')
    const value = result.value as ReadValue
    expect(body).toEqual(value.lines.map((l) => `${l.number}: ${l.text}`))
    for (const [i, line] of value.lines.entries()) {
      expect(line.number).toBe(offset + i)
      texts.push(line.text)
    }
    if (value.totalLines > 0) expect(value.lines.length).toBeGreaterThan(0) // every page makes progress
    const next = /Use offset=(\d+) to continue\.\)$/.exec(footer)
    if (next === null) {
      expect(footer).toBe(`(End of file - total ${value.totalLines} lines)`)
      return { texts, total: value.totalLines }
    }
    expect(Number(next[1])).toBe(offset + value.lines.length)
    offset = Number(next[1])
  }
  throw new Error('read walk did not end')
}

/** The lines a reader must see: split on \n, a final empty segment is no line, one trailing \r dropped, long lines cut. */
function oracleLines(content: string, max: number): string[] {
  const parts = content.split('\n')
  if (parts.at(-1) === '') parts.pop()
  return parts.map((line) => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line
    return text.length > max ? `${text.slice(0, max)}... (line truncated to ${max} chars)` : text
  })
}

/** Code point order, independent of the package's comparator. */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0)
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0)
  return x.length - y.length
}

const RUNS = { memory: 100, local: 25 } as const
const textUnit = fc.constantFrom('a', 'b', ' ', 'é', '€', '😀', '\t', '<', '"', '\\')

describe.each(BACKENDS)('pagination walks reassemble exactly on %s', (kind: BackendKind) => {
  it('read: following the footers yields every line of the file, once, in order', async () => {
    // ≤ 5 units of ≤ 2 UTF-16 chars: never truncated at 10; ≤ 20 bytes, so every window holds a line under 40 bytes
    const lines = fc.array(fc.string({ unit: textUnit, maxLength: 5 }), { maxLength: 40 })
    await withHarness(kind, { config: { readMaxBytes: 40, readMaxLineLength: 10 } }, async (h) => {
      await fc.assert(
        fc.asyncProperty(lines, fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.integer({ min: 1, max: 7 }), async (ls, eol, trailing, limit) => {
          const needsEol = trailing || (ls.length > 0 && ls.at(-1) === '')
          h.put('walk.txt', ls.join(eol) + (needsEol && ls.length > 0 ? eol : ''))
          const { texts, total } = await readWalk(h, 'walk.txt', limit)
          expect(texts).toEqual(ls)
          expect(total).toBe(ls.length)
        }),
        { numRuns: RUNS[kind] },
      )
    })
  })

  it('read: arbitrary text (lone \\r, blank and long lines) matches an independent line oracle', async () => {
    const content = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\r', '\n', '\n', 'x'), maxLength: 120 })
    // a cut line costs at most 6 × 3 + 31 bytes, so 60 always admits one
    await withHarness(kind, { config: { readMaxBytes: 60, readMaxLineLength: 6 } }, async (h) => {
      await fc.assert(
        fc.asyncProperty(content, fc.integer({ min: 1, max: 5 }), async (text, limit) => {
          h.put('walk.txt', text)
          const { texts, total } = await readWalk(h, 'walk.txt', limit)
          const expected = oracleLines(text, 6)
          expect(texts).toEqual(expected)
          expect(total).toBe(expected.length)
        }),
        { numRuns: RUNS[kind] },
      )
    })
  })

  it('list: following the footers yields the whole directory in order, with true totals on every page', async () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'B', '_', 'é', '😀', '-', '1', '@', ' ', '"', '\\'), minLength: 1, maxLength: 4 })
    const entries = fc.uniqueArray(fc.tuple(name, fc.constantFrom('file', 'directory', 'other')), { selector: (e) => e[0], maxLength: 12 })
    await withHarness(kind, { config: { listMaxEntries: 3 } }, async (h) => {
      let run = 0
      await fc.assert(
        fc.asyncProperty(entries, fc.integer({ min: 1, max: 4 }), async (es, start) => {
          const dir = `run${run++}`
          h.seed(dir, null)
          for (const [n, type] of es) h.seed(`${dir}/${n}`, type === 'file' ? n : type === 'directory' ? null : { symlink: '\u0001missing' })
          const rank = { directory: 0, file: 1, other: 2 } as const
          const order = [...es].sort((x, y) => rank[x[1]] - rank[y[1]] || byCodePoint(x[0], y[0]))
          const mark = { directory: '/', file: '', other: '@' } as const
          const count = (type: string): number => es.filter((e) => e[1] === type).length
          const [d, f, o] = [count('directory'), count('file'), count('other')]
          const comp = `${d} ${d === 1 ? 'directory' : 'directories'}, ${f} ${f === 1 ? 'file' : 'files'}${o > 0 ? `, ${o} other` : ''}`
          const total = order.length
          const seen: string[] = []
          let offset = Math.min(start, Math.max(total, 1))
          for (let step = 0; step < 100; step++) {
            const { body, footer } = parseEnvelope(expectOk(await h.call('list', { path: dir, offset })))
            for (const line of body) {
              const quoted = line.startsWith('"')
              const nameText = quoted ? (JSON.parse(line.slice(0, line.lastIndexOf('"') + 1)) as string) : line.replace(/[/@]$/, '')
              const marker = quoted ? line.slice(line.lastIndexOf('"') + 1) : line.slice(nameText.length)
              seen.push(`${nameText}${marker}`)
            }
            const end = offset + body.length - 1
            expect(body.length).toBe(Math.min(3, total - offset + 1))
            if (total === 0) expect(footer).toBe('(Empty directory)')
            else if (offset === 1 && end === total) expect(footer).toBe(`(${total} ${total === 1 ? 'entry' : 'entries'}: ${comp})`)
            else if (end === total) expect(footer).toBe(`(Showing entries ${offset}-${end} of ${total}: ${comp}.)`)
            else expect(footer).toBe(`(Showing entries ${offset}-${end} of ${total}: ${comp}. Use offset=${end + 1} to continue.)`)
            if (end >= total) break
            offset = end + 1
          }
          const first = Math.min(start, Math.max(order.length, 1)) - 1
          expect(seen).toEqual(order.slice(first).map(([n, type]) => `${n}${mark[type]}`))
        }),
        { numRuns: RUNS[kind] },
      )
    })
  })
})
