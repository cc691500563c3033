import fc from 'fast-check'
import { expect } from 'vitest'
import type { FsOpenFile } from '@seamfs/core'
import { codeOf, yieldToLoop, type Kit } from '../kit.js'
import { holds } from './seeded.js'
import { drain } from './stream.js'

const MiB = 1024 * 1024

/** Text of `size` bytes whose bytes differ from chunk to chunk. */
function varied(size: number): string {
  const line = 'openFile 0123456789 abcdefghijklmnopqrstuvwxyz é 🐂\n'
  let text = ''
  for (let i = 0; text.length < size; i++) text += `${i} ${line}`
  return text.slice(0, size)
}

/** Every byte of an opened file, each chunk copied as it came (a chunk is the caller's only until the next is asked for). */
async function bytesOf(file: FsOpenFile): Promise<Buffer> {
  const copies: Buffer[] = []
  for await (const chunk of file.chunks) copies.push(Buffer.from(chunk))
  return Buffer.concat(copies)
}

export function openFileClauses(kit: Kit): void {
  kit.group('read/open: openFile', {}, () => {
    kit.test('openFile: info is what stat says, and the chunks, concatenated, are the stored bytes', async (env) => {
      const samples = ['', 'one line\n', 'crlf\r\nkept\r\n🐂🍺中文', varied(3 * MiB + 11)]
      for (const [i, text] of samples.entries()) {
        await env.write(`o${i}.txt`, text)
        const target = await env.resolve(`o${i}.txt`)
        const stat = await env.fs.stat(target)
        const file = await env.fs.openFile(target)
        expect(file.info.type, `type of o${i}.txt`).toBe('file')
        expect(file.info.version, `version of o${i}.txt`).toBe(stat?.version)
        expect(file.info.size, `size of o${i}.txt`).toBe(Buffer.byteLength(text))
        const bytes = await bytesOf(file)
        expect(bytes.equals(Buffer.from(text)), `the bytes of o${i}.txt`).toBe(true)
        await file.close()
      }
    })

    kit.test('openFile: a missing file is FS_NOT_FOUND and a directory FS_NOT_REGULAR_FILE, rejecting the promise', async (env) => {
      await env.write('d/inner.txt', 'x')
      expect(await codeOf(env.fs.openFile(await env.resolve('missing.txt')))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.openFile(await env.resolve('d')))).toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(env.fs.openFile(await env.resolve('d/missing/deeper.txt')))).toBe('FS_NOT_FOUND')
    })

    kit.test('openFile: reading to the end, stopping early or close() releases the file; close() is idempotent', async (env) => {
      await env.write('early.txt', varied(MiB))
      const target = await env.resolve('early.txt')
      for (let i = 0; i < 60; i++) {
        const file = await env.fs.openFile(target)
        if (i % 3 === 0) {
          await file.close()
          await file.close()
        } else if (i % 3 === 1) {
          for await (const chunk of file.chunks) {
            expect(chunk.length).toBeGreaterThan(0)
            break
          }
          await file.close()
        } else {
          expect((await drain(file.chunks, 2 * MiB)).code).toBe('ok')
          await file.close()
        }
        await yieldToLoop()
      }
      await env.write('early.txt', 'rewritten')
      expect(await env.read('early.txt')).toBe('rewritten')
    })

    const endsTitle =
      'openFile: any mix of ends (closed unread, stopped after k chunks, read to the end, closed twice), many open at once: each releases the file, which is then rewritten and read back'
    kit.test(endsTitle, async (env) => {
      const text = varied(MiB)
      await env.write('ends.txt', text)
      const target = await env.resolve('ends.txt')
      const end = fc.oneof(
        fc.constant<['close']>(['close']),
        fc.integer({ min: 1, max: 4 }).map((k): ['stop', number] => ['stop', k]),
        fc.constant<['read']>(['read']),
        fc.constant<['twice']>(['twice']),
      )
      let round = 0
      await holds(kit, endsTitle, fc.array(end, { minLength: 1, maxLength: 12 }), async (ends) => {
        // All opened first, then ended each its own way: the files are open together.
        const files = await Promise.all(ends.map(() => env.fs.openFile(target)))
        for (const [i, [how, k]] of ends.entries()) {
          const file = files[i] as FsOpenFile
          if (how === 'stop') {
            let n = 0
            for await (const chunk of file.chunks) if (chunk.length === 0 || ++n >= (k ?? 1)) break
          } else if (how === 'read') expect((await bytesOf(file)).length).toBe(Buffer.byteLength(text))
          await file.close()
          if (how === 'twice') await file.close()
        }
        await yieldToLoop()
        const content = `round ${round++}`
        await env.write('ends.txt', content)
        expect(await env.read('ends.txt')).toBe(content)
        await env.write('ends.txt', text)
      })
    })

    kit.test('openFile: the signal is checked between chunks', async (env) => {
      const text = varied(4 * MiB)
      const size = Buffer.byteLength(text)
      await env.write('large.txt', text)
      const controller = new AbortController()
      const file = await env.fs.openFile(await env.resolve('large.txt'), { signal: controller.signal })
      let afterAbort = 0
      const { code, received } = await drain(file.chunks, size, (chunk) => {
        if (controller.signal.aborted) afterAbort += chunk.length
        controller.abort()
      })
      // A store may hand over the whole file as one chunk: then there is no "between", and the iterator may end or
      // report the abort it sees on its way to the end.
      expect(code, `the iterator after the abort (${received} of ${size} bytes received)`).toBe(received === size && code === 'ok' ? 'ok' : 'FS_ABORTED')
      expect(afterAbort, 'bytes yielded after the abort').toBe(0)
      await file.close()
      expect(await codeOf(env.fs.openFile(await env.resolve('large.txt'), { signal: AbortSignal.abort() }))).toBe('FS_ABORTED')
    })
  })

  kit.group('read/open: openFile versions', { writes: true }, () => {
    kit.test('openFile: its version guards a write: it passes while the file is unchanged, and is stale once it changed', async (env) => {
      await env.write('g.txt', 'first\n')
      const target = await env.resolve('g.txt')
      const opened = await env.fs.openFile(target)
      expect((await bytesOf(opened)).toString()).toBe('first\n')
      const replace = { expected: { kind: 'replaceIfVersion', version: opened.info.version } } as const
      const { version } = await env.fs.writeText(target, 'second\n', replace)
      const again = await env.fs.openFile(target)
      expect(again.info.version).toBe(version)
      await again.close()
      // The first version names content that is gone: a write guarded by it is refused.
      expect(await codeOf(env.fs.writeText(target, 'third\n', replace))).toBe('FS_STALE_VERSION')
      expect(await env.read('g.txt')).toBe('second\n')
    })
  })
}
