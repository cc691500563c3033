import { expect } from 'vitest'
import { codeOf, type Kit } from '../kit.js'
import { drain, streamChunks, streamClauses } from './stream.js'

/** Invalid UTF-8 of each kind, as stored bytes. */
export const INVALID_UTF8: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['a lone continuation byte', [0x61, 0x80, 0x62]],
  ['an overlong encoding', [0x61, 0xc0, 0xaf]],
  ['an encoded surrogate', [0x61, 0xed, 0xa0, 0x80]],
  ['a code point above U+10FFFF', [0x61, 0xf4, 0x90, 0x80, 0x80]],
  ['a byte that never occurs (0xFF)', [0x61, 0xff]],
  ['a lead byte followed by ASCII', [0xe4, 0x61, 0x62]],
  ['a truncated trailing sequence', [0x61, 0x62, 0xe4, 0xb8]],
]

/** Text whose multi-byte characters start at every offset modulo 4, so any chunking splits some. */
export function splitProneText(bytes: number): string {
  const unit = 'a' + 'é' + 'b' + '中' + 'cd' + '🐂' + 'e' + '\u{10FFFF}' + 'fgh'
  const unitBytes = new TextEncoder().encode(unit).length
  return unit.repeat(Math.ceil(bytes / unitBytes))
}

function bytesWithNulAt(length: number, at: number): Uint8Array {
  const bytes = new Uint8Array(length).fill(0x61)
  bytes[at] = 0
  return bytes
}

export function readClauses(kit: Kit): void {
  kit.group('read/stream', {}, () => {
    kit.test('readText returns exactly the written text', async (env) => {
      const samples = ['', 'a', 'line\n', 'crlf\r\nkept\r\n', 'lone\rcr', '🐂🍺中文 ñ \u{10FFFF}', '$&$$ \\ \t']
      for (const [i, text] of samples.entries()) {
        await env.write(`s${i}.txt`, text)
        expect(await env.read(`s${i}.txt`)).toBe(text)
      }
    })

    kit.test('an empty file reads as the empty string and streams no text', async (env) => {
      await env.write('empty.txt', '')
      expect(await env.read('empty.txt')).toBe('')
      expect((await streamChunks(env, 'empty.txt')).join('')).toBe('')
    })

    kit.test('readText and streamText of a missing file are FS_NOT_FOUND', async (env) => {
      const target = await env.resolve('missing.txt')
      expect(await codeOf(env.fs.readText(target))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.streamText(target))).toBe('FS_NOT_FOUND')
    })

    kit.test('readText and streamText of a directory are FS_NOT_REGULAR_FILE', async (env) => {
      await env.write('d/x.txt', 'x')
      const dir = await env.resolve('d')
      expect(await codeOf(env.fs.readText(dir))).toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(env.fs.streamText(dir))).toBe('FS_NOT_REGULAR_FILE')
    })

    kit.test('streamText: multi-byte characters split by chunk boundaries arrive whole', async (env) => {
      const text = splitProneText(3 * 1024 * 1024 + 7)
      await env.write('split.txt', text)
      const chunks = await streamChunks(env, 'split.txt')
      expect(chunks.every((c) => c.isWellFormed() && !c.includes('\uFFFD'))).toBe(true)
      expect(chunks.join('') === text).toBe(true)
    })

    kit.test(`streamText: a large file streams whole, in more than one chunk`, async (env) => {
      const size = kit.tuning.largeFileBytes
      const line = 'the quick brown fox jumps over the lazy dog 0123456789\n'
      const text = line.repeat(Math.ceil(size / line.length)).slice(0, size)
      await env.write('large.txt', text)
      let chunks = 0
      let length = 0
      let matches = true
      const { code } = await drain(await env.fs.streamText(await env.resolve('large.txt')), text.length, (chunk) => {
        matches &&= chunk === text.slice(length, length + chunk.length)
        length += chunk.length
        chunks++
      })
      expect(code).toBe('ok')
      expect(length).toBe(text.length)
      expect(matches).toBe(true)
      expect(chunks).toBeGreaterThan(1)
    })
  })

  kit.group('read/stream: stored bytes', { hooks: ['writeBytes'] }, () => {
    for (const [kind, bytes] of INVALID_UTF8) {
      kit.test(`invalid UTF-8 (${kind}) is FS_NOT_TEXT for readText and streamText`, async (env) => {
        await env.writeBytes('bad.txt', Uint8Array.from(bytes))
        const target = await env.resolve('bad.txt')
        expect(await codeOf(env.fs.readText(target))).toBe('FS_NOT_TEXT')
        expect(await codeOf(streamChunks(env, 'bad.txt'))).toBe('FS_NOT_TEXT')
      })
    }

    kit.test('invalid UTF-8 far past the first chunk is FS_NOT_TEXT', async (env) => {
      const bytes = new Uint8Array(3 * 1024 * 1024).fill(0x61)
      bytes[bytes.length - 100] = 0xff
      await env.writeBytes('late.txt', bytes)
      expect(await codeOf(env.read('late.txt'))).toBe('FS_NOT_TEXT')
      expect(await codeOf(streamChunks(env, 'late.txt'))).toBe('FS_NOT_TEXT')
    })

    kit.test('a NUL at byte 0 or 8191 is FS_NOT_TEXT; at byte 8192 the file is text', async (env) => {
      await env.writeBytes('nul0.txt', bytesWithNulAt(10_000, 0))
      await env.writeBytes('nul8191.txt', bytesWithNulAt(10_000, 8191))
      await env.writeBytes('nul8192.txt', bytesWithNulAt(10_000, 8192))
      for (const name of ['nul0.txt', 'nul8191.txt']) {
        expect(await codeOf(env.read(name))).toBe('FS_NOT_TEXT')
        expect(await codeOf(streamChunks(env, name))).toBe('FS_NOT_TEXT')
      }
      const late = await env.read('nul8192.txt')
      expect(late.length).toBe(10_000)
      expect(late.charCodeAt(8192)).toBe(0)
      expect((await streamChunks(env, 'nul8192.txt')).join('')).toBe(late)
    })

    kit.test('a leading UTF-8 BOM is not part of the text (read and stream)', async (env) => {
      await env.writeBytes('bom.txt', Uint8Array.from([0xef, 0xbb, 0xbf, 0x68, 0x69]))
      expect(await env.read('bom.txt')).toBe('hi')
      expect((await streamChunks(env, 'bom.txt')).join('')).toBe('hi')
    })

    kit.test('stored bytes round-trip: what the store holds is what readText decodes', async (env) => {
      const text = '🐂🍺中文\r\nline\n'
      await env.writeBytes('raw.txt', new TextEncoder().encode(text))
      expect(await env.read('raw.txt')).toBe(text)
    })
  })

  streamClauses(kit)
}
