import { readdirSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { expect, it } from 'vitest'
import { isFsError, type FsErrorCode, type FsTarget } from '@seamfs/core'
import fc from 'fast-check'
import { codeOf, yieldToLoop, type Env, type Kit } from '../kit.js'
import { everyCase, holds, runDirs } from './seeded.js'

const KiB = 1024
const MiB = 1024 * KiB

/**
 * ASCII text of `size` bytes with a line ending at every 4 KiB boundary, so any power-of-two
 * chunking from 4 KiB up splits some: a CRLF across the boundary, a lone CR just before it, a
 * lone CR just after it (in turn), plus an LF every 61 bytes.
 */
export function lineEndingText(size: number): string {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = i % 61 === 60 ? 0x0a : 0x61 + (i % 26)
  for (let boundary = 4 * KiB, m = 1; boundary + 1 < size; boundary += 4 * KiB, m++) {
    const [before, at] = m % 3 === 0 ? [0x0d, 0x0a] : m % 3 === 1 ? [0x0d, 0x7a] : [0x71, 0x0d]
    bytes[boundary - 1] = before
    bytes[boundary] = at
  }
  return new TextDecoder().decode(bytes)
}

/** Text of `size` bytes, cheap to build: short numbered lines. */
function linesText(size: number): string {
  const line = 'the quick brown fox jumps over the lazy dog 0123456789\n'
  return line.repeat(Math.ceil(size / line.length)).slice(0, size)
}

/** The first index where `a` and `b` differ, or undefined when they are equal. */
function firstDifference(a: string, b: string): number | undefined {
  if (a === b) return undefined
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return i
  return undefined
}

/** Rejects with a plain error when `pending` has not settled within `ms`. */
async function within<T>(ms: number, what: string, pending: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([pending, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Every chunk, each byte chunk copied: it is the caller's only until the next is asked for. */
export async function collect<T>(chunks: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const chunk of chunks) out.push(chunk instanceof Uint8Array ? (new Uint8Array(chunk) as T) : chunk)
  return out
}

/**
 * Reads `chunks` to the end or to the first failure (its code, and the error itself), turning
 * the event loop between chunks (so a deadline can fire however the backend completes) and
 * failing the test past `limit` characters (a stream that never ends) before the heap fills.
 */
export async function drain<C extends { readonly length: number } = string>(
  chunks: AsyncIterable<C>,
  limit: number,
  onChunk?: (chunk: C) => void,
): Promise<{ readonly code: FsErrorCode | 'ok'; readonly received: number; readonly error: unknown }> {
  let received = 0
  let error: unknown
  const code = await codeOf(async () => {
    try {
      for await (const chunk of chunks) {
        received += chunk.length
        onChunk?.(chunk)
        if (received > limit) break
        await yieldToLoop()
      }
    } catch (err) {
      error = err
      throw err
    }
  })
  expect(received, `characters streamed (more than ${limit}: the stream does not end)`).toBeLessThanOrEqual(limit)
  return { code, received, error }
}

/**
 * The chunks of the file at `path`, like `env.stream` but bounded by `limit` characters; a
 * failure is rethrown as it came.
 */
export async function streamChunks(env: Env, path: string, limit = 64 * MiB): Promise<string[]> {
  const chunks: string[] = []
  const { code, error } = await drain(await env.fs.streamText(await env.resolve(path)), limit, (chunk) => chunks.push(chunk))
  if (code !== 'ok') throw error
  return chunks
}

/** The whole text of a file, streamed. */
async function streamWhole(env: Env, target: FsTarget, limit: number): Promise<string> {
  const parts: string[] = []
  const { code } = await drain(await env.fs.streamText(target), limit, (chunk) => parts.push(chunk))
  expect(code).toBe('ok')
  return parts.join('')
}

/** How a `streamText` or `streamBytes` call failed: when the promise rejected (open), or while iterating. */
async function failureOf(open: Promise<AsyncIterable<{ readonly length: number }>>): Promise<string> {
  let chunks: AsyncIterable<{ readonly length: number }>
  try {
    chunks = await open
  } catch (err) {
    return `the promise rejected with ${isFsError(err) ? err.code : `a raw error: ${String(err)}`}`
  }
  const { code } = await drain(chunks, MiB)
  return code === 'ok' ? 'the promise resolved and the iterator ended without error' : `the promise resolved, then the iterator threw ${code}`
}

/** Open descriptors of this process, where the platform shows them (Linux). */
function openDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

/**
 * Opens the file at `path` with `method` and stops after the first chunk, 60 times over: each
 * stop must release the file (an unreleased one may hold a socket or handle from a bounded pool:
 * the next open then waits forever), leave no descriptor open, and let the file be replaced after
 * (a store may refuse to replace a file open for reading).
 */
async function expectReleasedAfterEarlyStops(env: Env, path: string, method: 'streamText' | 'streamBytes'): Promise<void> {
  const target = await env.resolve(path)
  const stops = 60
  const before = openDescriptors()
  for (let i = 0; i < stops; i++) {
    const stopEarly = async (): Promise<void> => {
      const chunks: AsyncIterable<{ readonly length: number }> = await env.fs[method](target)
      for await (const chunk of chunks) {
        expect(chunk.length).toBeGreaterThan(0)
        break
      }
    }
    await within(10_000, `${method} after ${i} early stops (files not released?)`, stopEarly())
    await yieldToLoop()
  }
  const after = openDescriptors()
  if (before !== undefined && after !== undefined) expect(after - before, `descriptors left open by ${stops} early stops`).toBeLessThan(stops / 2)
  await env.write(path, 'rewritten')
  expect(await env.read(path)).toBe('rewritten')
}

let gcFunction: (() => void) | null | undefined

/**
 * A function that forces a full garbage collection: `globalThis.gc` under `--expose-gc`, else
 * the one jest's leak detector takes (the flag set for a moment, `gc` read from a new context).
 * `undefined` where neither works (not V8, or a locked-down runtime).
 */
function forcedGc(): (() => void) | undefined {
  if (gcFunction !== undefined) return gcFunction ?? undefined
  gcFunction = null
  const exposed = (globalThis as { gc?: unknown }).gc
  if (typeof exposed === 'function') {
    gcFunction = exposed as () => void
    return gcFunction
  }
  try {
    setFlagsFromString('--expose-gc')
    const found: unknown = runInNewContext('gc')
    if (typeof found === 'function') gcFunction = found as () => void
  } catch {
    // no way to force a collection: the memory test is skipped and says why
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
  return gcFunction ?? undefined
}

/**
 * Live heap plus buffers after full collections: what is really held, not garbage yet to go.
 * Twice, because V8 frees array buffers on a background sweeper that the next collection
 * finishes first: after one, freed buffers may still count.
 */
function liveBytes(gc: () => void): number {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

/** Contents that tell a bounded stream from one that holds a line, a character run or the whole file. */
const SHAPES = ['lines', 'CRLF lines', 'one line', 'one line, multi-byte'] as const

/** A drawn case of the bounded-memory rule: how large, which content, where the reader pauses and for how long. */
interface BoundedCase {
  readonly size: number
  readonly shape: (typeof SHAPES)[number]
  readonly pauseAt: number
  readonly pauseMs: number
}

const showBounded = (c: BoundedCase): string => `${c.size} bytes of ${c.shape}, the reader pausing ${c.pauseMs} ms after chunk ${c.pauseAt}`

/** Sizes from 8 MiB (below it, a whole-file copy hides in the noise) to `largest`. */
function boundedCase(largest: number): fc.Arbitrary<BoundedCase> {
  return fc.record({
    size: fc.integer({ min: 8 * MiB, max: largest }),
    shape: fc.constantFrom(...SHAPES),
    pauseAt: fc.integer({ min: 0, max: 6 }),
    pauseMs: fc.constantFrom(0, 10, 25),
  })
}

/** Writes `c.size` bytes of `c.shape` at `path` and returns their length in UTF-16 code units (what `streamText` yields). */
async function writeShaped(env: Env, path: string, c: BoundedCase): Promise<number> {
  const unit =
    c.shape === 'lines'
      ? 'the quick brown fox jumps over the lazy dog 0123456789\n'
      : c.shape === 'CRLF lines'
        ? 'a line ending in CRLF\r\n'
        : c.shape === 'one line'
          ? 'abcdefghij'
          : 'é€𐍈a'
  const unitBytes = Buffer.byteLength(unit)
  const whole = Math.floor(c.size / unitBytes)
  const pad = c.size - whole * unitBytes
  await env.write(path, unit.repeat(whole) + 'x'.repeat(pad))
  return whole * unit.length + pad
}

export function streamClauses(kit: Kit): void {
  kit.group('read/stream: streaming', {}, () => {
    kit.test('streamText: line endings are returned as stored (CRLF, lone CR), also across chunk boundaries', async (env) => {
      const samples = ['a\r\nb\r\n', 'a\rb\r', '\r', '\r\n', '\n\r', 'x\r\r\ny', 'mixed\r\nlf\nlone\rend\r\n']
      for (const [i, text] of samples.entries()) await env.write(`s${i}.txt`, text)
      for (const [i, text] of samples.entries()) expect(JSON.stringify(await streamWhole(env, await env.resolve(`s${i}.txt`), MiB))).toBe(JSON.stringify(text))
      const large = lineEndingText(MiB + 3)
      await env.write('endings.txt', large)
      const streamed = await streamWhole(env, await env.resolve('endings.txt'), 2 * MiB)
      expect(firstDifference(streamed, large), 'the first character that differs from what was stored').toBeUndefined()
    })

    kit.test('streamText: open-time failures reject the returned promise (a missing file, a directory)', async (env) => {
      await env.write('d/inner.txt', 'x')
      expect(await failureOf(env.fs.streamText(await env.resolve('missing.txt')))).toBe('the promise rejected with FS_NOT_FOUND')
      expect(await failureOf(env.fs.streamText(await env.resolve('d')))).toBe('the promise rejected with FS_NOT_REGULAR_FILE')
      expect(await failureOf(env.fs.streamText(await env.resolve('d/missing/deeper.txt')))).toBe('the promise rejected with FS_NOT_FOUND')
    })

    kit.test('streamText: the signal is checked between chunks (an abort after the first chunk makes the iterator throw FS_ABORTED)', async (env) => {
      const text = linesText(4 * MiB)
      await env.write('large.txt', text)
      const controller = new AbortController()
      const chunks = await env.fs.streamText(await env.resolve('large.txt'), { signal: controller.signal })
      let afterAbort = 0
      const { code, received } = await drain(chunks, text.length, (chunk) => {
        if (controller.signal.aborted) afterAbort += chunk.length
        controller.abort()
      })
      expect(code, `the iterator after the abort (${received} of ${text.length} characters received)`).toBe('FS_ABORTED')
      expect(afterAbort, 'characters yielded after the abort').toBe(0)
      expect(await env.read('large.txt')).toBe(text)
    })

    kit.test('streamText: stopping early releases the file', async (env) => {
      const text = linesText(MiB)
      await env.write('early.txt', text)
      await expectReleasedAfterEarlyStops(env, 'early.txt', 'streamText')
    })

    const gc = forcedGc()
    const size = kit.tuning.largeFileBytes
    const unmeasurable =
      gc === undefined
        ? 'no way to force a garbage collection in this runtime'
        : size < 8 * MiB
          ? `largeFileBytes (${size}) is too small to tell a bounded stream from a whole-file read`
          : undefined
    for (const method of ['streamText', 'streamBytes'] as const) {
      const name = `${method}: memory stays bounded by the chunk size, whatever the file size, its lines and the reader's pace (drawn)`
      if (unmeasurable !== undefined) {
        it.skip(`${name} (skipped: ${unmeasurable})`, () => undefined)
      } else if (gc !== undefined) {
        kit.test(name, async (env) => {
          const dirs = runDirs('bounded-')
          const check = async (c: BoundedCase): Promise<void> => {
            const path = `${dirs()}/huge.txt`
            // Written and let go at once: only what the stream holds may count below.
            const chars = await writeShaped(env, path, c)
            const target = await env.resolve(path)
            // Measured after forced collections, so only what the stream really holds counts; a third of
            // the file is far above any sane chunk size and far below a whole-file copy.
            const bound = Math.floor(c.size / 3)
            const before = liveBytes(gc)
            const chunks: AsyncIterable<{ readonly length: number }> = await env.fs[method](target)
            // Sampled where the reader paused, and half-way: each sample costs two full collections.
            let peak = 0
            const total = method === 'streamText' ? chars : c.size
            let seen = 0
            let index = 0
            let received = 0
            const iterator = chunks[Symbol.asyncIterator]()
            for (let next = await iterator.next(); next.done !== true; next = await iterator.next(), index++) {
              received += next.value.length
              // The reader pauses once, for a timer: a backend that reads ahead without waiting for
              // it fills memory meanwhile.
              if (index === c.pauseAt) {
                if (c.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, c.pauseMs))
                peak = Math.max(peak, liveBytes(gc))
              }
              if (seen < total / 2 && seen + next.value.length >= total / 2) peak = Math.max(peak, liveBytes(gc))
              seen += next.value.length
            }
            expect(received, 'what the stream yielded, in all').toBe(total)
            // The floor is the lower of before and after: memory still held before the stream and freed
            // during it (a write's buffer, say) must not hide what the stream held.
            const held = peak - Math.min(before, liveBytes(gc))
            expect(held, `bytes held while streaming a file of ${c.size} bytes`).toBeLessThan(bound)
            // Let go of it before the next run (on a store that does not write, through the outside hook if any).
            if (kit.unmet({ caps: ['remove'], writes: true }) === undefined) await env.fs.remove(target)
            else if (kit.unmet({ hooks: ['remove'] }) === undefined) await env.remove(path)
          }
          // The hardest case first, whatever the run count: the largest file, one line of multi-byte
          // characters (a reader that splits lines holds it all), a pause after the second chunk.
          await everyCase([{ size, shape: 'one line, multi-byte', pauseAt: 1, pauseMs: 25 } as const], showBounded, check)
          await holds(kit, name, boundedCase(size), check, Math.max(1, Math.round(kit.tuning.generativeRuns / 25)))
        })
      }
    }
  })

  kit.group('read/stream: streamBytes', { hooks: ['writeBytes'] }, () => {
    kit.test('streamBytes: the chunks, concatenated, are the stored bytes exactly (BOM, NUL, CRLF, invalid UTF-8 included)', async (env) => {
      const bytes = new Uint8Array(3 * MiB + 5)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251
      bytes.set([0xef, 0xbb, 0xbf, 0x00, 0x0d, 0x0a, 0xff], 0)
      await env.writeBytes('mixed.bin', bytes)
      const copies: Uint8Array[] = []
      // A chunk is the caller's only until the next is asked for: kept, it is copied (a Buffer's `slice` would not copy).
      const { code, received } = await drain(await env.fs.streamBytes(await env.resolve('mixed.bin')), bytes.length, (chunk) =>
        copies.push(new Uint8Array(chunk)),
      )
      expect(code).toBe('ok')
      expect(received).toBe(bytes.length)
      expect(Buffer.concat(copies).equals(Buffer.from(bytes)), 'the streamed bytes differ from the stored ones').toBe(true)
      await env.writeBytes('empty.bin', new Uint8Array(0))
      expect((await drain(await env.fs.streamBytes(await env.resolve('empty.bin')), 1)).received, 'bytes of an empty file').toBe(0)
    })

    kit.test('streamBytes: a chunk stays as it was handed over until the caller asks for the next one', async (env) => {
      const bytes = new Uint8Array(MiB + 7)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 12)) % 253
      await env.writeBytes('held.bin', bytes)
      let at = 0
      for await (const chunk of await env.fs.streamBytes(await env.resolve('held.bin'))) {
        const copy = Buffer.from(chunk)
        // The caller holds the chunk across event-loop turns and a timer (a read of the next chunk
        // into the same buffer would land meanwhile), and only then asks for the next one.
        await yieldToLoop()
        await new Promise((resolve) => setTimeout(resolve, 1))
        const held = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        expect(held.equals(copy), `the chunk at byte ${at} changed while the caller held it`).toBe(true)
        expect(copy.equals(bytes.subarray(at, at + copy.length)), `the chunk at byte ${at}`).toBe(true)
        at += copy.length
        if (at > bytes.length) break
      }
      expect(at, 'bytes streamed').toBe(bytes.length)
    })

    kit.test('streamBytes: open-time failures reject the returned promise (a missing file, a directory)', async (env) => {
      await env.writeBytes('d/inner.bin', 'x')
      expect(await failureOf(env.fs.streamBytes(await env.resolve('missing.bin')))).toBe('the promise rejected with FS_NOT_FOUND')
      expect(await failureOf(env.fs.streamBytes(await env.resolve('d')))).toBe('the promise rejected with FS_NOT_REGULAR_FILE')
      expect(await failureOf(env.fs.streamBytes(await env.resolve('d/missing/deeper.bin')))).toBe('the promise rejected with FS_NOT_FOUND')
    })

    kit.test('streamBytes: the signal is checked between chunks, and stopping early releases the file', async (env) => {
      const bytes = new Uint8Array(4 * MiB).fill(0x62)
      await env.writeBytes('large.bin', bytes)
      const target = await env.resolve('large.bin')
      const controller = new AbortController()
      let afterAbort = 0
      const { code, received } = await drain(await env.fs.streamBytes(target, { signal: controller.signal }), bytes.length, (chunk) => {
        if (controller.signal.aborted) afterAbort += chunk.length
        controller.abort()
      })
      // A store at hand may hand over the whole file as one chunk: then there is no "between".
      expect(code, `the iterator after the abort (${received} of ${bytes.length} bytes received)`).toBe(received === bytes.length ? 'ok' : 'FS_ABORTED')
      expect(afterAbort, 'bytes yielded after the abort').toBe(0)
      await expectReleasedAfterEarlyStops(env, 'large.bin', 'streamBytes')
    })
  })

  kit.group('read/stream: streaming stored bytes', { hooks: ['writeBytes'] }, () => {
    kit.test('streamText: a failure after the first chunk is thrown by the iterator, after the chunks before it', async (env) => {
      const bytes = new Uint8Array(3 * MiB).fill(0x61)
      bytes[bytes.length - 100] = 0xff
      await env.writeBytes('late.txt', bytes)
      const { code, received } = await drain(await env.fs.streamText(await env.resolve('late.txt')), bytes.length)
      expect(code).toBe('FS_NOT_TEXT')
      expect(received, 'characters yielded before the invalid byte was reached').toBeGreaterThan(0)
    })
  })
}
