import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { isFsError, type FsEditRequest, type FsErrorCode } from '@seamfs/core/backend'
import { normalizeLf } from '../src/text.js'
import { applyLiteralEdit } from '../src/edit.js'

/** A raw character with the LF-normalized character it stands for. */
interface Unit {
  readonly lf: string
  readonly raw: string
}

/** Naive tokenizer: a `\r` directly followed by `\n` is one LF unit; anything else stands for itself. */
function units(raw: string): Unit[] {
  const out: Unit[] = []
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '\r' && raw[i + 1] === '\n') {
      out.push({ lf: '\n', raw: '\r\n' })
      i++
    } else {
      out.push({ lf: raw[i] as string, raw: raw[i] as string })
    }
  }
  return out
}

const hasLoneCr = (s: string): boolean => /\r(?!\n)/.test(s)

const lfOf = (raw: string): string =>
  units(raw)
    .map((u) => u.lf)
    .join('')

function naiveEol(raw: string): '\n' | '\r\n' {
  const sample = raw.slice(0, 4096)
  const crlf = sample.split('\r\n').length - 1
  const lf = sample.split('\n').length - 1 - crlf
  return crlf > lf ? '\r\n' : '\n'
}

type Model = { readonly code: FsErrorCode } | { readonly before: string; readonly after: string; readonly stored: string }

/**
 * The deliberately naive model of the literal edit of `editText`: split/join on the LF text for the
 * result; for the stored text, keep every untouched unit's raw characters and write
 * the replacement with the dominant ending.
 */
function model(raw: string, edit: FsEditRequest): Model {
  const oldLf = lfOf(edit.oldString)
  const newLf = lfOf(edit.newString)
  const before = lfOf(raw)
  if (oldLf === '') return { code: 'FS_EDIT_NOT_FOUND' }
  const count = before.split(oldLf).length - 1
  if (count === 0) return { code: 'FS_EDIT_NOT_FOUND' }
  if (count > 1 && !edit.replaceAll) return { code: 'FS_AMBIGUOUS_EDIT' }
  const replacement = naiveEol(raw) === '\r\n' ? newLf.split('\n').join('\r\n') : newLf
  const us = units(raw)
  let stored = ''
  let i = 0
  while (i < us.length) {
    const here = us
      .slice(i, i + oldLf.length)
      .map((u) => u.lf)
      .join('')
    if (here === oldLf) {
      stored += replacement
      i += oldLf.length
    } else {
      stored += (us[i] as Unit).raw
      i++
    }
  }
  return { before, after: before.split(oldLf).join(newLf), stored }
}

function run(raw: string, edit: FsEditRequest): Model {
  try {
    const r = applyLiteralEdit(raw, edit, 'm.txt')
    return { before: r.before, after: r.after, stored: r.stored }
  } catch (err) {
    if (isFsError(err)) return { code: err.code }
    throw err
  }
}

const joined = (piece: fc.Arbitrary<string>, maxLength: number): fc.Arbitrary<string> => fc.array(piece, { maxLength }).map((p) => p.join(''))

/** The alphabet: `a`, `b`, LF and whole CRLF pairs (no lone CR). */
const pairPiece = fc.constantFrom('a', 'b', '\n', '\r\n')
/** With lone CRs too. */
const crPiece = fc.constantFrom('a', 'b', '\n', '\r\n', '\r')

/** A text and an edit whose oldString is often a slice of the text (so matches are frequent). */
function editCase(piece: fc.Arbitrary<string>): fc.Arbitrary<[string, FsEditRequest]> {
  return joined(piece, 14).chain((text) =>
    fc.tuple(
      fc.constant(text),
      fc.record({
        oldString: fc.oneof(
          joined(piece, 3),
          fc.tuple(fc.nat(text.length), fc.integer({ min: 1, max: 4 })).map(([at, n]) => text.slice(at, at + n)),
        ),
        newString: joined(piece, 4),
        replaceAll: fc.boolean(),
      }),
    ),
  )
}

describe('applyLiteralEdit against a naive model', () => {
  it('matches the model on texts made of a, b, LF and CRLF', () => {
    fc.assert(
      fc.property(editCase(pairPiece), ([text, edit]) => {
        const expected = model(text, edit)
        const got = run(text, edit)
        expect(got).toEqual(expected)
        if ('after' in got) {
          expect(got.before).toBe(normalizeLf(text))
          expect(normalizeLf(got.stored)).toBe(got.after)
        }
      }),
      { numRuns: 1000 },
    )
  })

  it('leaves an LF-only file LF-only: stored is exactly after', () => {
    const lfPiece = fc.constantFrom('a', 'b', '\n')
    fc.assert(
      fc.property(editCase(lfPiece), joined(pairPiece, 4), ([text, edit], newString) => {
        const e = { ...edit, newString }
        const got = run(text, e)
        if (!('after' in got)) return
        expect(got.stored).toBe(got.after)
        expect(got.stored).not.toContain('\r')
        expect(got.after).toBe(text.split(normalizeLf(e.oldString)).join(normalizeLf(newString)))
      }),
      { numRuns: 500 },
    )
  })

  it('keeps a pure CRLF file pure CRLF', () => {
    const line = joined(fc.constantFrom('a', 'b'), 3)
    const crlfFile = fc.array(line, { minLength: 1, maxLength: 8 }).map((ls) => ls.map((l) => l + '\r\n').join(''))
    const anyEnding = fc.constantFrom('a', 'b', '\n', '\r\n')
    const crlfCase = crlfFile.chain((text) =>
      fc.tuple(
        fc.constant(text),
        fc.record({
          oldString: fc.oneof(
            joined(anyEnding, 3),
            fc.tuple(fc.nat(text.length), fc.integer({ min: 1, max: 5 })).map(([at, n]) => text.slice(at, at + n)),
          ),
          newString: joined(anyEnding, 4),
          replaceAll: fc.boolean(),
        }),
      ),
    )
    let succeeded = 0
    fc.assert(
      fc.property(crlfCase, ([text, edit]) => {
        const got = run(text, edit)
        expect(got).toEqual(model(text, edit))
        if (!('after' in got)) return
        succeeded++
        expect(got.stored.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/)
        expect(normalizeLf(got.stored)).toBe(got.after)
        expect(got.after).toBe(got.before.split(normalizeLf(edit.oldString)).join(normalizeLf(edit.newString)))
      }),
      { numRuns: 700 },
    )
    expect(succeeded).toBeGreaterThan(50)
  })

  it('matches the model (stored bytes and errors) even with lone CRs, and after is normalizeLf(stored)', () => {
    fc.assert(
      fc.property(editCase(crPiece), ([text, edit]) => {
        const expected = model(text, edit)
        const got = run(text, edit)
        if ('code' in expected) {
          expect(got).toEqual(expected)
          return
        }
        expect('after' in got).toBe(true)
        if (!('after' in got)) return
        expect(got.before).toBe(expected.before)
        expect(got.stored).toBe(expected.stored)
        expect(got.after).toBe(normalizeLf(got.stored))
        // Without lone CRs (that could pair with an adjacent LF) it is the plain split/join.
        if (!hasLoneCr(text) && !hasLoneCr(edit.newString)) expect(got.after).toBe(expected.after)
      }),
      { numRuns: 1000 },
    )
  })

  it('chains: the next edit sees as before exactly the previous after', () => {
    fc.assert(
      fc.property(editCase(crPiece), joined(crPiece, 3), ([text, edit], next) => {
        let first
        try {
          first = applyLiteralEdit(text, edit, 'c.txt')
        } catch {
          return
        }
        // Append something unique so the follow-up edit always matches once.
        const second = applyLiteralEdit(first.stored + 'Z', { oldString: 'Z', newString: next, replaceAll: false }, 'c.txt')
        expect(second.before).toBe(first.after + 'Z')
      }),
      { numRuns: 500 },
    )
  })

  it('treats every $ pattern in newString literally', () => {
    const dollarPiece = fc.constantFrom('$', '&', "'", '`', '1', '<a>', 'a', 'b', '\n')
    fc.assert(
      fc.property(joined(fc.constantFrom('a', 'b', 'c', '\n'), 12), joined(dollarPiece, 6), (text, newString) => {
        fc.pre(text.includes('a'))
        const got = applyLiteralEdit(text, { oldString: 'a', newString, replaceAll: true }, 'd.txt')
        expect(got.after).toBe(text.split('a').join(newString))
      }),
      { numRuns: 300 },
    )
  })
})
