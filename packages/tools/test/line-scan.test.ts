/**
 * ByteLineWindow (lines counted on bytes, only the window decoded) against the read tool's
 * text path: core's strict chunk decoder, then the text's window (windowOfText). Same window, line count,
 * byte cap and FS_NOT_TEXT failure for any bytes (BOM, CRLF, lone CR, NUL, invalid or cut
 * UTF-8), any byte chunking and any limits.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
// Core's decoder is not exported: the test takes it from source, as the reference it is.
import { TextChunkDecoder } from '../../core/src/text.js'
import { ByteLineWindow } from '../src/line-scan.js'
import { windowOfText, type ReadWindow, type WindowLimits } from '../src/read-window.js'

type Outcome = { readonly window: ReadWindow } | { readonly error: { code: unknown; message: string } }

function failure(err: unknown): Outcome {
  const { code, message } = err as { code: unknown; message: string }
  return { error: { code, message } }
}

/** The text path: decode each chunk strictly, then cut the window from the text. */
function textPath(chunks: readonly Uint8Array[], limits: WindowLimits): Outcome {
  try {
    const decoder = new TextChunkDecoder('f.txt')
    let text = ''
    for (const chunk of chunks) text += decoder.push(chunk)
    text += decoder.end()
    return { window: windowOfText(text, limits) }
  } catch (err) {
    return failure(err)
  }
}

function bytePath(chunks: readonly Uint8Array[], limits: WindowLimits): Outcome {
  try {
    const window = new ByteLineWindow(limits, 'f.txt')
    // A reused buffer: each chunk is overwritten once pushed, as a backend may do.
    for (const chunk of chunks) {
      const reused = Uint8Array.from(chunk)
      window.push(reused)
      reused.fill(0x41)
    }
    return { window: window.end() }
  } catch (err) {
    return failure(err)
  }
}

function cut(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = []
  for (let at = 0, i = 0; at < bytes.length || i === 0; i++) {
    const size = sizes[i % sizes.length] ?? 1
    chunks.push(bytes.subarray(at, at + size))
    at += size
    if (size === 0 && i > sizes.length) break
  }
  return chunks
}

const piece = fc.constantFrom(
  ...['a', 'b', 'é', '€', '😀', '\r', '\n', '\n', '\r\n', 'xxxxxxxx', '\uFEFF'].map((s) => Buffer.from(s, 'utf8')),
  Buffer.of(0xef, 0xbb, 0xbf),
  Buffer.of(0x00),
  Buffer.of(0xff),
  Buffer.of(0xe2, 0x82),
  Buffer.of(0x80),
  Buffer.of(0xf0, 0x9f, 0x98),
)
const rare = fc.constantFrom(Buffer.of(0x00), Buffer.of(0xff), Buffer.of(0xe2, 0x82), Buffer.of(0x80), Buffer.of(0xf0, 0x9f, 0x98))
const valid = fc.constantFrom(...['a', 'é', '€', '😀', '\r', '\n', '\n', '\n', '\r\n', 'xxxxxxxxxxxx', 'yy'].map((s) => Buffer.from(s, 'utf8')))
/** Mostly valid text (an optional BOM in front), sometimes one bad byte sequence somewhere. */
const content = fc
  .tuple(fc.boolean(), fc.array(valid, { maxLength: 80 }), fc.option(fc.tuple(rare, fc.nat()), { freq: 4 }), fc.array(piece, { maxLength: 6 }))
  .map(([bom, parts, bad, tail]) => {
    const list = [...parts]
    if (bad !== null) list.splice(bad[1] % (list.length + 1), 0, bad[0])
    if (tail.length > 0 && bad !== null) list.push(...tail)
    return Buffer.concat([bom ? Buffer.of(0xef, 0xbb, 0xbf) : Buffer.alloc(0), ...list])
  })
const limits = fc.record({
  offset: fc.integer({ min: 1, max: 40 }),
  limit: fc.integer({ min: 1, max: 10 }),
  maxLineLength: fc.integer({ min: 1, max: 14 }),
  maxBytes: fc.integer({ min: 1, max: 160 }),
})
const sizes = fc.array(fc.integer({ min: 0, max: 11 }), { minLength: 1, maxLength: 6 })

describe('ByteLineWindow', () => {
  it('equals the text path for any bytes, byte chunking and limits', () => {
    fc.assert(
      fc.property(content, sizes, limits, (bytes, s, l) => {
        const chunks = cut(
          bytes,
          s.map((n) => n || 1),
        )
        expect(bytePath(chunks, l)).toStrictEqual(textPath(chunks, l))
      }),
      { numRuns: 3000, seed: 16_4 },
    )
  })

  it('equals the text path with empty chunks between', () => {
    fc.assert(
      fc.property(content, sizes, limits, (bytes, s, l) => {
        const chunks = cut(bytes, s).flatMap((c) => [c, new Uint8Array(0)])
        expect(bytePath(chunks, l)).toStrictEqual(textPath(chunks, l))
      }),
      { numRuns: 1000, seed: 16_5 },
    )
  })

  it('cuts a long selected line of 4-byte characters exactly as the text path', () => {
    const line = Buffer.from(`${'😀'.repeat(50)}\r\n${'é'.repeat(30)}\n`, 'utf8')
    const l = { offset: 1, limit: 5, maxLineLength: 7, maxBytes: 1000 }
    for (const size of [1, 2, 3, 5, 64]) {
      const chunks = cut(line, [size])
      const got = bytePath(chunks, l)
      expect(got).toStrictEqual(textPath(chunks, l))
      expect('window' in got && got.window.lines[0]?.text).toBe(`${'😀'.repeat(3)}\uD83D... (line truncated to 7 chars)`)
    }
  })

  it('reports a NUL in the first 8192 bytes as binary and a cut last character as invalid text', () => {
    const l = { offset: 1, limit: 5, maxLineLength: 10, maxBytes: 100 }
    const nul = Buffer.concat([Buffer.alloc(8191, 0x61), Buffer.of(0)])
    expect(bytePath(cut(nul, [1000]), l)).toStrictEqual({ error: { code: 'FS_NOT_TEXT', message: 'cannot read "f.txt": binary file' } })
    const late = Buffer.concat([Buffer.alloc(8192, 0x61), Buffer.of(0)])
    expect(bytePath(cut(late, [1000]), l)).toStrictEqual(textPath(cut(late, [1000]), l))
    expect(bytePath([Buffer.of(0x61, 0xe2, 0x82)], l)).toStrictEqual({ error: { code: 'FS_NOT_TEXT', message: 'cannot read "f.txt": invalid UTF-8 text' } })
  })
})
