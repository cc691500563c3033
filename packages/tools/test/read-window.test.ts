/**
 * LineWindow against a plain reference written from the read tool's rules, for any
 * text cut into any chunks: the window, the exact line count, the byte cap.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
// The window is an internal of the read tool, not part of the package's exports.
import { LineWindow, readFooter, type ReadWindow, type WindowLimits } from '../src/read-window.js'

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

function chunked(text: string, sizes: readonly number[]): string[] {
  const chunks: string[] = []
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length] ?? 1
    chunks.push(text.slice(at, at + size))
    at += size
  }
  return chunks
}

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '😀', '\uD800', '\r', '\n', '\n', '\r\n', 'xxxxxxxx'), maxLength: 200 })
const limits = fc.record({
  offset: fc.integer({ min: 1, max: 40 }),
  limit: fc.integer({ min: 1, max: 10 }),
  maxLineLength: fc.integer({ min: 1, max: 12 }),
  maxBytes: fc.integer({ min: 1, max: 120 }),
})

describe('LineWindow', () => {
  it('equals the reference for any text, chunking and limits (empty chunks included)', () => {
    fc.assert(
      fc.property(text, fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 6 }), limits, (t, sizes, l) => {
        const window = new LineWindow(l)
        // a zero size yields an empty chunk and then a one-char one
        for (const chunk of chunked(
          t,
          sizes.map((s) => s || 1),
        ))
          window.push(chunk)
        for (const s of sizes) if (s === 0) window.push('')
        expect(window.end()).toEqual(reference(t, l))
      }),
      { numRuns: 2000 },
    )
  })

  it('counts every line of a large input exactly while keeping only the window', () => {
    const line = (n: number): string => `line ${n}${n % 7 === 0 ? '\r' : ''}`
    const all = Array.from({ length: 50_000 }, (_, i) => line(i + 1)).join('\n')
    const window = new LineWindow({ offset: 49_990, limit: 5, maxLineLength: 100, maxBytes: 1000 })
    for (let at = 0; at < all.length; at += 4093) window.push(all.slice(at, at + 4093))
    const result = window.end()
    expect(result).toEqual({
      lines: [49_990, 49_991, 49_992, 49_993, 49_994].map((n) => ({ number: n, text: `line ${n}` })),
      totalLines: 50_000,
      truncatedByBytes: false,
    })
    expect(readFooter(49_990, result)).toBe('(Showing lines 49990-49994 of 50000. Use offset=49995 to continue.)')
  })
})

describe('LineWindow with a byte cap below one line', () => {
  it('still returns the first line of the window, so following the footer always moves forward', () => {
    const window = new LineWindow({ offset: 2, limit: 10, maxLineLength: 100, maxBytes: 5 })
    window.push('first line\nsecond line is long\nthird\n')
    const result = window.end()
    expect(result.lines).toEqual([{ number: 2, text: 'second line is long' }])
    expect(result.truncatedByBytes).toBe(true)
    expect(readFooter(2, result)).toBe('(Output capped. Showing lines 2-2. Use offset=3 to continue.)')
  })
})
