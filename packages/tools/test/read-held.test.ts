/**
 * The read tool's small-file lane: a file the store handed over whole at the open (core's
 * `takeHeldBytes`: a small local file, a memory file of one chunk) is windowed from those bytes with
 * no chunk reads. It must answer exactly as the chunk lane does for the same bytes: text, value,
 * errors (not text, too large, offset out of range) and images, whatever the name says.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { FileSystem, FsTarget } from '@seamfs/core'
import { FileSystemLayer, takeHeldBytes, type OpenedFile } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool, type ToolsConfig } from '@seamfs/tools'

/** The inner store's chunks handed on one at a time, cut in small pieces: the chunk lane. */
class Streaming extends FileSystemLayer {
  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const opened = await super.openTarget(target, signal)
    const chunks = opened.chunks
    async function* pieces(): AsyncGenerator<Uint8Array> {
      for await (const chunk of chunks) for (let at = 0; at < chunk.length; at += 7) yield new Uint8Array(chunk.subarray(at, at + 7))
    }
    return { info: opened.info, chunks: pieces() }
  }
}

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const GIF = new TextEncoder().encode('GIF89a')

/** File bytes: text lines (LF or CRLF, a BOM, non-ASCII), sometimes an image signature, an invalid byte or a NUL. */
const contents = fc
  .record({
    start: fc.constantFrom<Uint8Array | undefined>(undefined, undefined, undefined, PNG, GIF, Uint8Array.from([0xef, 0xbb, 0xbf])),
    lines: fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ' ', 'é', '字', '\t', 'x'), maxLength: 40 }), { maxLength: 30 }),
    crlf: fc.boolean(),
    endNewline: fc.boolean(),
    flaw: fc.constantFrom<number | undefined>(undefined, undefined, undefined, 0x00, 0xff),
    flawAt: fc.nat(),
  })
  .map(({ start, lines, crlf, endNewline, flaw, flawAt }) => {
    const text = lines.join(crlf ? '\r\n' : '\n') + (endNewline && lines.length > 0 ? '\n' : '')
    const bytes = Buffer.concat([start ?? new Uint8Array(0), Buffer.from(text)])
    if (flaw !== undefined && bytes.length > 0) bytes[flawAt % bytes.length] = flaw
    return bytes
  })

const configs = fc.record({
  readMaxBytes: fc.constantFrom(40, 200, 50_000),
  readMaxLineLength: fc.constantFrom(5, 2000),
  readImageMaxBytes: fc.constantFrom(10, 5_000_000),
  // Small: a held file is windowed on bytes as a stream is (the byte window), not decoded whole.
  readStreamMinSize: fc.constantFrom(16, 1_048_576),
})

const args = fc.record({
  offset: fc.option(fc.integer({ min: 1, max: 35 }), { nil: undefined }),
  limit: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
})

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

interface Store {
  readonly fs: FileSystem
  readonly root: string
  put(name: string, bytes: Uint8Array): void
}

const stores: Record<string, (maxTextBytes: number) => Store> = {
  memory: (maxTextBytes) => {
    const fs = new MemoryFileSystem({ cwd: '/w', maxTextBytes })
    return { fs, root: '/w', put: (name, bytes) => fs.volume.writeFileSync(`/w/${name}`, bytes) }
  },
  local: (maxTextBytes) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-read-held-')))
    dirs.push(root)
    return { fs: new LocalFileSystem({ cwd: root, maxTextBytes }), root, put: (name, bytes) => writeFileSync(join(root, name), bytes) }
  },
}

const readTool = (fs: FileSystem, root: string, config: Partial<ToolsConfig>): FileTool =>
  createFileTools({ fs, cwd: root, policy: false, config }).find((t) => t.name === 'read') as FileTool

describe.each(Object.keys(stores))('read tool on %s: whole bytes at the open, or chunks', (kind) => {
  it('answers alike in both lanes', async () => {
    for (const maxTextBytes of [100_000, 64]) {
      const store = (stores[kind] as (max: number) => Store)(maxTextBytes)
      let n = 0
      await fc.assert(
        fc.asyncProperty(contents, configs, args, fc.constantFrom('f.txt', 'f.png'), async (bytes, config, call, suffix) => {
          const name = `${n++}-${suffix}`
          store.put(name, bytes)
          const held = readTool(store.fs, store.root, config)
          const streamed = readTool(new Streaming(store.fs), store.root, config)
          const callArgs = { file_path: join(store.root, name), ...call }
          expect(await held.execute(callArgs)).toEqual(await streamed.execute(callArgs))
        }),
        { numRuns: kind === 'memory' ? 300 : 120 },
      )
    }
  })

  it('the held lane is the one taken on a small file', async () => {
    const store = (stores[kind] as (max: number) => Store)(100_000)
    store.put('small.txt', Buffer.from('one\ntwo\n'))
    const file = await store.fs.openFile(await store.fs.resolve(join(store.root, 'small.txt')))
    expect(Buffer.from(takeHeldBytes(file) ?? []).toString()).toBe('one\ntwo\n')
    const streamedFile = await new Streaming(store.fs).openFile(await store.fs.resolve(join(store.root, 'small.txt')))
    expect(takeHeldBytes(streamedFile)).toBeUndefined()
    await streamedFile.close()
  })
})
