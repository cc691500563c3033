/**
 * windowOfText (the window of a text read whole) against a plain reference written from the read
 * tool's rules, for any text: the window, the exact line count, the byte cap.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
// The window is an internal of the read tool, not part of the package's exports.
import { readFooter, windowOfText, type ReadWindow, type WindowLimits } from '../src/read-window.js'

/** Split on \n; a final segment is a line only when non-empty; one trailing \r dropped; long lines cut; stop at the first line over the byte cap. */
function reference(text: string, limits: WindowLimits): ReadWindow {
  const parts = text.split('\n')
  if (parts.at(-1) === '') parts.pop()
  const lines: Array<{ number: number; text: string }> = []
  let bytes = 0
  let truncatedByBytes = false
  for (let i = limits.offset - 1; i < parts.length && lines.length < limits.limit; i++) {
    let line = parts[i] as string
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line.length > limits.maxLineLength) line = `${line.slice(0, limits.maxLineLength)}... (line truncated to ${limits.maxLineLength} chars)`
    const cost = Buffer.byteLength(line, 'utf8') + (lines.length > 0 ? 1 : 0)
    if (lines.length > 0 && bytes + cost > limits.maxBytes) {
      truncatedByBytes = true
      break
    }
    bytes += cost
    lines.push({ number: i + 1, text: line })
  }
  return { lines, totalLines: parts.length, truncatedByBytes }
}

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '😀', '\uD800', '\r', '\n', '\n', '\r\n', 'xxxxxxxx'), maxLength: 200 })
const limits = fc.record({
  offset: fc.integer({ min: 1, max: 40 }),
  limit: fc.integer({ min: 1, max: 10 }),
  maxLineLength: fc.integer({ min: 1, max: 12 }),
  maxBytes: fc.integer({ min: 1, max: 120 }),
})

describe('windowOfText', () => {
  it('equals the reference for any text and limits', () => {
    fc.assert(
      fc.property(text, limits, (t, l) => {
        expect(windowOfText(t, l)).toEqual(reference(t, l))
      }),
      { numRuns: 3000 },
    )
    // The closed window's count of the rest: a CR, a trailing newline, an unterminated last line.
    const rest = ['a\nb\r\nc', 'a\nb\nc\n', 'a\n\n\n', 'a', '\n', 'a\r']
    for (const t of rest)
      for (const limit of [1, 2])
        expect(windowOfText(t, { offset: 1, limit, maxLineLength: 10, maxBytes: 100 })).toEqual(
          reference(t, { offset: 1, limit, maxLineLength: 10, maxBytes: 100 }),
        )
  })

  it('counts every line of a large input exactly while keeping only the window', () => {
    const line = (n: number): string => `line ${n}${n % 7 === 0 ? '\r' : ''}`
    const all = Array.from({ length: 50_000 }, (_, i) => line(i + 1)).join('\n')
    const result = windowOfText(all, { offset: 49_990, limit: 5, maxLineLength: 100, maxBytes: 1000 })
    expect(result).toEqual({
      lines: [49_990, 49_991, 49_992, 49_993, 49_994].map((n) => ({ number: n, text: `line ${n}` })),
      totalLines: 50_000,
      truncatedByBytes: false,
    })
    expect(readFooter(49_990, result)).toBe('(Showing lines 49990-49994 of 50000. Use offset=49995 to continue.)')
  })
})

describe('windowOfText with a byte cap below one line', () => {
  it('still returns the first line of the window, so following the footer always moves forward', () => {
    const result = windowOfText('first line\nsecond line is long\nthird\n', { offset: 2, limit: 10, maxLineLength: 100, maxBytes: 5 })
    expect(result.lines).toEqual([{ number: 2, text: 'second line is long' }])
    expect(result.truncatedByBytes).toBe(true)
    expect(readFooter(2, result)).toBe('(Output capped. Showing lines 2-2. Use offset=3 to continue.)')
  })
})
