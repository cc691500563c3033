import { describe, expect, it } from 'vitest'
import { type FsEditRequest } from '@seamfs/core/backend'
import { UTF8_BOM } from '../src/text.js'
import { applyLiteralEdit, editTextBytes } from '../src/edit.js'
import { assertEditRequest, findLiteral } from '../src/edit.js'
import { concatBytes, expectFsError, utf8 } from './helpers.js'

const edit = (oldString: string, newString: string, replaceAll = false): FsEditRequest => ({
  oldString,
  newString,
  replaceAll,
})

describe('findLiteral', () => {
  it('finds non-overlapping occurrences left to right', () => {
    expect(findLiteral('aaaa', 'aa')).toEqual([0, 2])
    expect(findLiteral('aaa', 'aa')).toEqual([0])
    expect(findLiteral('abcabc', 'bc')).toEqual([1, 4])
    expect(findLiteral('abc', 'x')).toEqual([])
    expect(findLiteral('', 'x')).toEqual([])
  })
})

describe('applyLiteralEdit', () => {
  describe('matching', () => {
    it('replaces a single match', () => {
      const r = applyLiteralEdit('one two three', edit('two', '2'), 'f')
      expect(r).toEqual({ before: 'one two three', after: 'one 2 three', stored: 'one 2 three' })
    })

    it('rejects an empty oldString with FS_EDIT_NOT_FOUND', () => {
      expectFsError(() => applyLiteralEdit('abc', edit('', 'x'), 'f'), 'FS_EDIT_NOT_FOUND')
      expectFsError(() => applyLiteralEdit('', edit('', 'x', true), 'f'), 'FS_EDIT_NOT_FOUND')
    })

    it('rejects a missing oldString with FS_EDIT_NOT_FOUND naming the path', () => {
      const err = expectFsError(() => applyLiteralEdit('abc', edit('x', 'y'), 'src/a.ts'), 'FS_EDIT_NOT_FOUND')
      expect(err.message).toContain('"src/a.ts"')
      expectFsError(() => applyLiteralEdit('', edit('x', 'y', true), 'f'), 'FS_EDIT_NOT_FOUND')
    })

    it('rejects several matches without replaceAll with FS_AMBIGUOUS_EDIT', () => {
      const err = expectFsError(() => applyLiteralEdit('a-a-a', edit('a', 'b'), 'f.txt'), 'FS_AMBIGUOUS_EDIT')
      expect(err.message).toContain('3 times')
      expect(err.message).toContain('"f.txt"')
    })

    it('replaces every match with replaceAll, and a single match too', () => {
      expect(applyLiteralEdit('a-a-a', edit('a', 'bb', true), 'f').after).toBe('bb-bb-bb')
      expect(applyLiteralEdit('xay', edit('a', 'b', true), 'f').after).toBe('xby')
    })

    it('counts occurrences without overlap, left to right', () => {
      expect(applyLiteralEdit('aaa', edit('aa', 'X'), 'f').after).toBe('Xa')
      expectFsError(() => applyLiteralEdit('aaaa', edit('aa', 'X'), 'f'), 'FS_AMBIGUOUS_EDIT')
      expect(applyLiteralEdit('aaaa', edit('aa', 'X', true), 'f').after).toBe('XX')
    })

    it('does not re-scan inserted text', () => {
      expect(applyLiteralEdit('a.a', edit('a', 'aa', true), 'f').after).toBe('aa.aa')
    })

    it('deletes the match when newString is empty', () => {
      expect(applyLiteralEdit('keep DROP keep', edit(' DROP', ''), 'f').after).toBe('keep keep')
      expect(applyLiteralEdit('x\r\ny\r\n', edit('y\n', ''), 'f').stored).toBe('x\r\n')
      expect(applyLiteralEdit('abc', edit('abc', ''), 'f')).toEqual({ before: 'abc', after: '', stored: '' })
    })

    it('matches astral characters and combining sequences literally', () => {
      expect(applyLiteralEdit('🐂é🐂', edit('é', 'e\u0301'), 'f').after).toBe('🐂e\u0301🐂')
      expectFsError(() => applyLiteralEdit('e\u0301', edit('é', 'x'), 'f'), 'FS_EDIT_NOT_FOUND')
    })
  })

  describe('$ in newString is literal', () => {
    it.each([['$&'], ['$$'], ["$'"], ['$`'], ['$1'], ['$<name>'], ['$']])('keeps %s as typed', (dollar) => {
      const r = applyLiteralEdit('pre MID post', edit('MID', `[${dollar}]`), 'f')
      expect(r.after).toBe(`pre [${dollar}] post`)
      expect(r.stored).toBe(`pre [${dollar}] post`)
    })

    it('keeps $ patterns literal with replaceAll and in CRLF files', () => {
      expect(applyLiteralEdit('x x', edit('x', '$&$&', true), 'f').after).toBe('$&$& $&$&')
      const r = applyLiteralEdit('a\r\nx\r\n', edit('x', "$'$`\n$$"), 'f')
      expect(r.stored).toBe("a\r\n$'$`\r\n$$\r\n")
    })

    it('matches $ patterns in oldString literally', () => {
      expect(applyLiteralEdit('cost: $& and $$', edit('$$', 'USD'), 'f').after).toBe('cost: $& and USD')
      expect(applyLiteralEdit('a.b', edit('.', '*'), 'f').after).toBe('a*b')
    })
  })

  describe('line endings', () => {
    it('matches an LF oldString in a CRLF file, and a CRLF oldString in an LF file', () => {
      const crlf = applyLiteralEdit('one\r\ntwo\r\nthree\r\n', edit('one\ntwo', '1\n2'), 'f')
      expect(crlf.before).toBe('one\ntwo\nthree\n')
      expect(crlf.after).toBe('1\n2\nthree\n')
      expect(crlf.stored).toBe('1\r\n2\r\nthree\r\n')
      const lf = applyLiteralEdit('one\ntwo\n', edit('one\r\ntwo', 'x\r\ny'), 'f')
      expect(lf.stored).toBe('x\ny\n')
    })

    it('handles matches that start or end on a CRLF', () => {
      const file = 'a\r\nb\r\n'
      expect(applyLiteralEdit(file, edit('a\n', 'z\n'), 'f').stored).toBe('z\r\nb\r\n')
      expect(applyLiteralEdit(file, edit('a\n', 'z'), 'f').stored).toBe('zb\r\n')
      expect(applyLiteralEdit(file, edit('\nb', '-'), 'f').stored).toBe('a-\r\n')
      expect(applyLiteralEdit(file, edit('\n', '|', true), 'f').stored).toBe('a|b|')
      expect(applyLiteralEdit(file, edit('b\n', ''), 'f').stored).toBe('a\r\n')
      expect(applyLiteralEdit(file, edit('a', 'x'), 'f').stored).toBe('x\r\nb\r\n')
      // An oldString of just CRLF normalizes to LF, which is not empty.
      expect(applyLiteralEdit(file, edit('\r\n', '\n\n', true), 'f').stored).toBe('a\r\n\r\nb\r\n\r\n')
    })

    it('keeps the exact bytes of untouched text in a mixed file (CRLF dominant)', () => {
      const file = 'a\r\nb\nc\r\n' // 2 CRLF, 1 LF
      const r = applyLiteralEdit(file, edit('b', 'x'), 'f')
      expect(r.before).toBe('a\nb\nc\n')
      expect(r.after).toBe('a\nx\nc\n')
      expect(r.stored).toBe('a\r\nx\nc\r\n') // the bare LF after b is outside the match: kept
      // Inserted line breaks take the dominant CRLF.
      expect(applyLiteralEdit(file, edit('b', 'x\ny'), 'f').stored).toBe('a\r\nx\r\ny\nc\r\n')
      // A match that swallows the bare LF writes the dominant ending back.
      expect(applyLiteralEdit(file, edit('b\n', 'x\n'), 'f').stored).toBe('a\r\nx\r\nc\r\n')
      expect(applyLiteralEdit(file, edit('a\nb', 'q'), 'f').stored).toBe('q\nc\r\n')
    })

    it('keeps the exact bytes of untouched text in a mixed file (LF dominant)', () => {
      const file = 'a\nb\nc\r\nd'
      const r = applyLiteralEdit(file, edit('d', 'x\ny'), 'f')
      expect(r.stored).toBe('a\nb\nc\r\nx\ny')
      expect(applyLiteralEdit(file, edit('c\nd', 'z'), 'f').stored).toBe('a\nb\nz')
    })

    it('uses LF for inserted text on a tie', () => {
      expect(applyLiteralEdit('a\r\nb\nc', edit('c', '1\n2'), 'f').stored).toBe('a\r\nb\n1\n2')
    })

    it('decides the dominant ending from the first 4096 characters only', () => {
      const head = 'h\n'.repeat(10) + 'x'.repeat(4096 - 20)
      const file = head + 'line\r\n'.repeat(50) + 'END'
      expect(applyLiteralEdit(file, edit('END', 'e1\ne2'), 'f').stored).toBe(head + 'line\r\n'.repeat(50) + 'e1\ne2')
      const crlfHead = 'h\r\n' + 'x'.repeat(4093)
      const file2 = crlfHead + 'line\n'.repeat(50) + 'END'
      expect(applyLiteralEdit(file2, edit('END', 'e1\ne2'), 'f').stored).toBe(crlfHead + 'line\n'.repeat(50) + 'e1\r\ne2')
    })

    it('never turns a lone CR into a line ending', () => {
      const r = applyLiteralEdit('a\rb\r\nc\r\n', edit('c', 'x\ny'), 'f')
      expect(r.before).toBe('a\rb\nc\n')
      expect(r.stored).toBe('a\rb\r\nx\r\ny\r\n')
      expect(applyLiteralEdit('a\rb', edit('b', 'c'), 'f').stored).toBe('a\rc')
    })

    it('reports after as normalizeLf(stored) when a lone CR meets an inserted LF', () => {
      // No CRLF on disk, but deleting "b" joins the lone CR to the LF.
      const r = applyLiteralEdit('a\rb\n', edit('b', ''), 'f')
      expect(r.stored).toBe('a\r\n')
      expect(r.after).toBe('a\n')
      const s = applyLiteralEdit('b', edit('b', '\r\r\n'), 'f')
      expect(s.after).toBe(s.stored.replaceAll('\r\n', '\n'))
    })
  })
})

describe('editTextBytes', () => {
  it('keeps a BOM on the output bytes when the input had one', () => {
    const r = editTextBytes(concatBytes(UTF8_BOM, utf8('hello world')), edit('world', 'there'), 'f')
    expect(Array.from(r.bytes)).toEqual(Array.from(concatBytes(UTF8_BOM, utf8('hello there'))))
    expect(r.before).toBe('hello world')
    expect(r.after).toBe('hello there')
  })

  it('adds no BOM when the input had none', () => {
    const r = editTextBytes(utf8('hello world'), edit('world', 'there'), 'f')
    expect(Array.from(r.bytes)).toEqual(Array.from(utf8('hello there')))
    expect(r.bytes[0]).toBe(0x68)
  })

  it('returns before/after LF-normalized and without BOM, bytes with the file endings', () => {
    const r = editTextBytes(concatBytes(UTF8_BOM, utf8('x\r\ny\r\n')), edit('y', 'é\n中'), 'f')
    expect(r.before).toBe('x\ny\n')
    expect(r.after).toBe('x\né\n中\n')
    expect(Array.from(r.bytes)).toEqual(Array.from(concatBytes(UTF8_BOM, utf8('x\r\né\r\n中\r\n'))))
  })

  it('keeps a U+FEFF that follows the BOM as text', () => {
    const r = editTextBytes(concatBytes(UTF8_BOM, UTF8_BOM, utf8('a')), edit('a', 'b'), 'f')
    expect(r.before).toBe('\uFEFFa')
    expect(Array.from(r.bytes)).toEqual([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x62])
  })

  it('can edit text right after the BOM, and the BOM is not matchable', () => {
    const bytes = concatBytes(UTF8_BOM, utf8('abc'))
    expect(Array.from(editTextBytes(bytes, edit('a', ''), 'f').bytes)).toEqual([0xef, 0xbb, 0xbf, 0x62, 0x63])
    expectFsError(() => editTextBytes(bytes, edit('\uFEFFa', 'x'), 'f'), 'FS_EDIT_NOT_FOUND')
  })

  it('rejects a NUL in the sample with FS_NOT_TEXT (edit verb), before matching', () => {
    const err = expectFsError(() => editTextBytes(utf8('a\0b'), edit('a', 'x'), 'bin'), 'FS_NOT_TEXT')
    expect(err.message).toBe('cannot edit "bin": binary file')
    expectFsError(() => editTextBytes(utf8('\0'), edit('', ''), 'bin'), 'FS_NOT_TEXT')
  })

  it('rejects invalid UTF-8 with FS_NOT_TEXT', () => {
    expectFsError(() => editTextBytes(Uint8Array.of(0x61, 0xc0, 0xaf), edit('a', 'b'), 'f'), 'FS_NOT_TEXT')
  })

  it('propagates edit errors', () => {
    expectFsError(() => editTextBytes(utf8('aa'), edit('a', 'b'), 'f'), 'FS_AMBIGUOUS_EDIT')
    expectFsError(() => editTextBytes(utf8('aa'), edit('z', 'b'), 'f'), 'FS_EDIT_NOT_FOUND')
  })
})

describe('assertEditRequest', () => {
  it('accepts a well-formed request, with or without replaceAll', () => {
    expect(() => assertEditRequest({ oldString: 'a', newString: '', replaceAll: true })).not.toThrow()
    expect(() => assertEditRequest({ oldString: 'a', newString: 'b' })).not.toThrow()
    expect(() => assertEditRequest({ oldString: 'a', newString: 'b', replaceAll: undefined })).not.toThrow()
  })

  it('accepts an oldString of just CRLF or CR (they do not normalize to empty)', () => {
    expect(() => assertEditRequest({ oldString: '\r\n', newString: '', replaceAll: false })).not.toThrow()
    expect(() => assertEditRequest({ oldString: '\r', newString: '', replaceAll: false })).not.toThrow()
  })

  it('rejects an empty oldString with FS_EDIT_NOT_FOUND', () => {
    expectFsError(() => assertEditRequest({ oldString: '', newString: 'x', replaceAll: false }), 'FS_EDIT_NOT_FOUND')
  })

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'a'],
    ['a number', 1],
    ['an empty object', {}],
    ['a missing newString', { oldString: 'a' }],
    ['a missing oldString', { newString: 'a' }],
    ['a numeric oldString', { oldString: 1, newString: 'a' }],
    ['a null newString', { oldString: 'a', newString: null }],
    ['a String object', { oldString: new String('a'), newString: 'b' }],
    ['a string replaceAll', { oldString: 'a', newString: 'b', replaceAll: 'yes' }],
    ['a numeric replaceAll', { oldString: 'a', newString: 'b', replaceAll: 1 }],
    ['a null replaceAll', { oldString: 'a', newString: 'b', replaceAll: null }],
  ])('rejects %s with FS_EDIT_NOT_FOUND', (_name, request) => {
    expectFsError(() => assertEditRequest(request), 'FS_EDIT_NOT_FOUND')
  })
})

// More matches than a JavaScript array can hold (V8 dies with a fatal "invalid size error" past
// about 112 million elements) must not kill the process: the file is well under maxTextBytes.
describe('an edit with more matches than an array can hold', () => {
  const MANY = 130_000_000
  const text = 'a'.repeat(MANY)

  it('without replaceAll is FS_AMBIGUOUS_EDIT with the count, not a crash', () => {
    const err = expectFsError(() => applyLiteralEdit(text, edit('a', 'b'), 'big.txt'), 'FS_AMBIGUOUS_EDIT')
    expect(err.details).toEqual({ matches: MANY })
  })
})

describe('lone surrogates in an edit request', () => {
  it('newString with a lone surrogate is FS_NOT_TEXT (it would be stored as U+FFFD)', () => {
    expectFsError(() => assertEditRequest(edit('a', 'x\uD83D')), 'FS_NOT_TEXT')
  })

  it('oldString with a lone surrogate is FS_EDIT_NOT_FOUND (it could match half of a pair)', () => {
    expectFsError(() => assertEditRequest(edit('\uD83D', 'x')), 'FS_EDIT_NOT_FOUND')
  })
})
