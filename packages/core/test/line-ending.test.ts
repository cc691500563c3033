import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { LINE_ENDING_SAMPLE_CHARS, applyLineEnding, detectLineEnding, normalizeLf, type LineEnding } from '../src/text.js'

/** Naive CRLF → LF: walk the characters, drop a `\r` that is directly followed by `\n`. */
function naiveNormalize(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\r' && text[i + 1] === '\n') continue
    out += text[i]
  }
  return out
}

/** Naive dominant ending: count CRLFs and bare LFs among the first 4096 characters. */
function naiveDetect(text: string): LineEnding {
  const sample = Array.from({ length: Math.min(text.length, 4096) }, (_, i) => text[i])
  let crlf = 0
  let lf = 0
  sample.forEach((c, i) => {
    if (c !== '\n') return
    if (sample[i - 1] === '\r') crlf++
    else lf++
  })
  return crlf > lf ? '\r\n' : '\n'
}

const piece = fc.constantFrom('a', 'é', '🐂', ' ', '\n', '\r\n', '\r')
const anyText = fc.array(piece, { maxLength: 60 }).map((p) => p.join(''))
const line = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, '_'))
const lfText = fc.array(line, { maxLength: 12 }).map((lines) => lines.join('\n'))

describe('normalizeLf', () => {
  it('replaces CRLF with LF and leaves lone CR alone', () => {
    expect(normalizeLf('a\r\nb\r\n')).toBe('a\nb\n')
    expect(normalizeLf('a\rb\r')).toBe('a\rb\r')
    expect(normalizeLf('\r')).toBe('\r')
    expect(normalizeLf('\n\r')).toBe('\n\r')
    expect(normalizeLf('\r\r\n')).toBe('\r\n') // the first CR is lone and stays
    expect(normalizeLf('a\nb')).toBe('a\nb')
    expect(normalizeLf('')).toBe('')
  })

  it('matches a naive character walk on any mix of endings', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        expect(normalizeLf(t)).toBe(naiveNormalize(t))
      }),
      { numRuns: 500 },
    )
  })

  it('never changes a text without CRLF, keeps every lone CR and drops one character per CRLF', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        const n = normalizeLf(t)
        if (!t.includes('\r\n')) expect(n).toBe(t)
        // Every `\r` not followed by `\n` in t survives.
        const lone = (s: string): number => s.split('').filter((c, i) => c === '\r' && s[i + 1] !== '\n').length
        expect(n.split('\r').length - 1).toBeGreaterThanOrEqual(lone(t))
        expect(n.length).toBe(t.length - (t.split('\r\n').length - 1))
      }),
      { numRuns: 300 },
    )
  })
})

describe('applyLineEnding', () => {
  it('is the identity for LF', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        expect(applyLineEnding(t, '\n')).toBe(t)
      }),
    )
  })

  it('turns every LF into CRLF', () => {
    expect(applyLineEnding('a\nb\n\nc', '\r\n')).toBe('a\r\nb\r\n\r\nc')
    expect(applyLineEnding('', '\r\n')).toBe('')
    expect(applyLineEnding('no newline', '\r\n')).toBe('no newline')
  })

  it('round-trips through normalizeLf for lines without CR', () => {
    fc.assert(
      fc.property(lfText, fc.constantFrom<LineEnding>('\n', '\r\n'), (t, eol) => {
        const applied = applyLineEnding(t, eol)
        expect(normalizeLf(applied)).toBe(t)
        expect(applied.split(eol).length).toBe(t.split('\n').length)
        if (eol === '\r\n') expect(applied.replaceAll('\r\n', '')).not.toContain('\n')
      }),
      { numRuns: 500 },
    )
  })

  it('is detected back as the dominant ending when the text has a line break early', () => {
    fc.assert(
      fc.property(
        lfText.filter((t) => t.includes('\n')),
        fc.constantFrom<LineEnding>('\n', '\r\n'),
        (t, eol) => {
          fc.pre(t.indexOf('\n') < LINE_ENDING_SAMPLE_CHARS - 2)
          expect(detectLineEnding(applyLineEnding(t, eol))).toBe(eol)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('detectLineEnding', () => {
  it('needs a strict CRLF majority', () => {
    expect(detectLineEnding('a\r\nb\r\nc\n')).toBe('\r\n')
    expect(detectLineEnding('a\r\nb\n')).toBe('\n') // tie
    expect(detectLineEnding('a\r\nb\nc\r\nd\n')).toBe('\n') // tie
    expect(detectLineEnding('a\r\nb\nc\n')).toBe('\n')
    expect(detectLineEnding('a\r\n')).toBe('\r\n')
    expect(detectLineEnding('a\n')).toBe('\n')
  })

  it('defaults to LF without line breaks', () => {
    expect(detectLineEnding('')).toBe('\n')
    expect(detectLineEnding('abc')).toBe('\n')
    expect(detectLineEnding('a\rb\rc\r')).toBe('\n') // lone CR is not a line ending
  })

  it('never counts a lone CR, even next to a CRLF', () => {
    expect(detectLineEnding('\r\r\n')).toBe('\r\n')
    expect(detectLineEnding('\n\r\r\n')).toBe('\n') // one LF, one CRLF: tie
    expect(detectLineEnding('a\r\rb\nc\r\n')).toBe('\n')
  })

  it('looks only at the first 4096 characters', () => {
    expect(LINE_ENDING_SAMPLE_CHARS).toBe(4096)
    // The first 4096 characters: 3 LF and 1 CRLF; then 1000 CRLF lines.
    const head = 'a\nb\nc\nd\r\n'
    const lfFirst = head + 'x'.repeat(4096 - head.length) + 'y\r\n'.repeat(1000)
    expect(lfFirst.slice(0, 4096).split('\r\n').length - 1).toBe(1)
    expect(detectLineEnding(lfFirst)).toBe('\n')
    // And the reverse: CRLF-dominant head, LF-dominant tail.
    const crlfFirst = 'a\r\n' + 'x'.repeat(4093) + 'y\n'.repeat(1000)
    expect(detectLineEnding(crlfFirst)).toBe('\r\n')
  })

  it('counts a CRLF whose LF is character 4095, not one whose LF is character 4096', () => {
    expect(detectLineEnding('x'.repeat(4094) + '\r\n')).toBe('\r\n')
    expect(detectLineEnding('x'.repeat(4095) + '\r\n')).toBe('\n')
    // One LF in the sample; the CRLF straddling the end does not make a tie-breaker.
    expect(detectLineEnding('\n' + 'x'.repeat(4094) + '\r\n\r\n\r\n')).toBe('\n')
    expect(detectLineEnding('\n' + 'x'.repeat(4092) + '\r\n\r\n')).toBe('\n') // 2nd LF is char 4096: tie
    expect(detectLineEnding('\n' + 'x'.repeat(4091) + '\r\n\r\n')).toBe('\r\n') // both CRLFs in the sample
  })

  it('counts UTF-16 code units, so astral characters take two', () => {
    const ox = '🐂'.repeat(2047) // 4094 code units
    expect(detectLineEnding(ox + '\r\n')).toBe('\r\n')
    expect(detectLineEnding(ox + 'x\r\n')).toBe('\n')
  })

  it('agrees with a naive count on any text, including long ones', () => {
    const longPiece = fc.constantFrom('\n', '\r\n', '\r', 'a', 'é', 'b'.repeat(700), 'c'.repeat(1365))
    const longText = fc.array(longPiece, { maxLength: 40 }).map((p) => p.join(''))
    fc.assert(
      fc.property(fc.oneof(anyText, longText), (t) => {
        expect(detectLineEnding(t)).toBe(naiveDetect(t))
      }),
      { numRuns: 500 },
    )
  })
})
