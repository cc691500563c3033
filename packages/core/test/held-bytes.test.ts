/**
 * `takeHeldBytes`: the content of a file the store handed over whole at the open (a small local
 * file, a memory file), for a reader that would otherwise pay promise turns for a chunk already
 * there. It must give exactly the file's bytes, once, only while no chunk was asked for, never for
 * an answer a layer made itself, and leave nothing open.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { SandboxedFileSystem, type FileSystem, type FsOpenFile, type FsTarget } from '@seamfs/core'
import { FileSystemLayer, takeHeldBytes, type Awaitable, type OpenedFile } from '@seamfs/core/backend'

/** Hands the inner store's chunks on one at a time, as a stream would: nothing is held. */
class Streaming extends FileSystemLayer {
  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const opened = await super.openTarget(target, signal)
    const chunks = opened.chunks
    async function* streamed(): AsyncGenerator<Uint8Array> {
      for await (const chunk of chunks) yield chunk
    }
    return { info: opened.info, chunks: streamed() }
  }
}

async function drained(file: FsOpenFile): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const chunk of file.chunks) parts.push(Buffer.from(chunk))
  return Buffer.concat(parts)
}

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const small = Buffer.from('line one\r\nline two\n\u00e9\n')
/** Past the local backend's whole-read bound (64 KiB) and memory's chunk (1 MiB): streamed. */
const large = Buffer.alloc(1536 * 1024, 0x61)

interface Store {
  readonly fs: FileSystem
  readonly root: string
}

const stores: Record<string, () => Store> = {
  memory: () => ({ fs: new MemoryFileSystem({ cwd: '/w', files: { 'small.txt': small, 'empty.txt': '', 'large.txt': large } }), root: '/w' }),
  local: () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-held-')))
    dirs.push(root)
    writeFileSync(join(root, 'small.txt'), small)
    writeFileSync(join(root, 'empty.txt'), '')
    writeFileSync(join(root, 'large.txt'), large)
    return { fs: new LocalFileSystem({ cwd: root }), root }
  },
}

describe.each(Object.keys(stores))('takeHeldBytes on %s', (kind) => {
  const { fs, root } = (stores[kind] as () => Store)()
  const open = async (on: FileSystem, name: string): Promise<FsOpenFile> => on.openFile(await on.resolve(join(root, name)))

  it('gives a small file its exact bytes, once; its chunks then yield nothing', async () => {
    const file = await open(fs, 'small.txt')
    const bytes = takeHeldBytes(file)
    expect(bytes === undefined ? undefined : Buffer.from(bytes)).toEqual(small)
    expect(takeHeldBytes(file)).toBeUndefined()
    expect(await drained(file)).toEqual(Buffer.alloc(0))
    await file.close()
    await file.close()
  })

  it('gives an empty file no bytes, not undefined', async () => {
    const file = await open(fs, 'empty.txt')
    expect(takeHeldBytes(file)?.length).toBe(0)
  })

  it('gives nothing once a chunk was asked for; the chunks go on as before', async () => {
    const file = await open(fs, 'small.txt')
    const chunks = file.chunks[Symbol.asyncIterator]()
    const first = await chunks.next()
    expect(takeHeldBytes(file)).toBeUndefined()
    const rest: Uint8Array[] = first.done === true ? [] : [Buffer.from(first.value)]
    for (let step = await chunks.next(); step.done !== true; step = await chunks.next()) rest.push(Buffer.from(step.value))
    expect(Buffer.concat(rest)).toEqual(small)
  })

  it('gives nothing after close, nor for a copy of the answer a layer made', async () => {
    const closed = await open(fs, 'small.txt')
    // Passed on by itself, `close` still closes this file.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- detached on purpose: what is tested
    const { close } = closed
    await close()
    expect(takeHeldBytes(closed)).toBeUndefined()
    const copied = await open(fs, 'small.txt')
    expect(takeHeldBytes({ ...copied })).toBeUndefined()
    expect(Buffer.from(takeHeldBytes(copied) ?? [])).toEqual(small)
  })

  it('gives nothing once the signal of the open aborted: the chunks fail with FS_ABORTED, as before', async () => {
    const controller = new AbortController()
    const file = await fs.openFile(await fs.resolve(join(root, 'small.txt')), { signal: controller.signal })
    controller.abort()
    expect(takeHeldBytes(file)).toBeUndefined()
    await expect(drained(file)).rejects.toMatchObject({ code: 'FS_ABORTED' })
  })

  it('a copy of the answer keeps its chunks (own properties), and is not held', async () => {
    const file = await open(fs, 'small.txt')
    expect(Object.keys(file).sort()).toEqual(['chunks', 'close', 'info'])
    const copy = { ...file }
    expect(takeHeldBytes(copy)).toBeUndefined()
    expect(await drained(copy)).toEqual(small)
  })

  it('gives nothing for a store that streams, and the same bytes come as chunks', async () => {
    const streaming = new Streaming(fs)
    const file = await open(streaming, 'small.txt')
    expect(takeHeldBytes(file)).toBeUndefined()
    expect(await drained(file)).toEqual(small)
  })

  it('passes through a sandbox, which hands the store answer on', async () => {
    const fenced = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: root })
    const file = await open(fenced, 'small.txt')
    expect(Buffer.from(takeHeldBytes(file) ?? [])).toEqual(small)
  })

  it('gives nothing for a file the store streams (past its whole-read bound)', async () => {
    const file = await open(fs, 'large.txt')
    expect(takeHeldBytes(file)).toBeUndefined()
    // Compared as buffers: a deep equality of 1.5 MiB element by element takes seconds.
    expect((await drained(file)).equals(large)).toBe(true)
    await file.close()
  })
})

describe('the local backend answers small reads at once', () => {
  it('readBytes hands a small file over in a buffer of its own, not a view of the shared pool', async () => {
    const { fs, root } = (stores.local as () => Store)()
    // A secret in Node's pool, where a pooled view of a small read would sit beside it.
    const secret = Buffer.from('pool neighbour: secret')
    const bytes = await fs.readBytes(await fs.resolve(join(root, 'small.txt')))
    expect(Buffer.from(bytes).equals(small)).toBe(true)
    expect(bytes.byteOffset).toBe(0)
    // The read's own buffer: its bytes and at most the one byte that found the end, zero.
    expect(bytes.buffer.byteLength).toBeLessThanOrEqual(small.length + 1)
    expect(Buffer.from(bytes.buffer).includes(secret)).toBe(false)
  })

  it('its read hooks give values, not promises, for a file within the whole-read bound; a missing file throws at once', () => {
    const { fs, root } = (stores.local as () => Store)()
    const hooks = fs as unknown as {
      resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget>
      openTarget(target: FsTarget): Awaitable<OpenedFile>
      loadBytes(target: FsTarget, request: { maxBytes: number }): Awaitable<Uint8Array>
      statTarget(target: FsTarget): Awaitable<unknown>
    }
    const target = hooks.resolvePath(join(root, 'small.txt'), undefined) as FsTarget
    expect(target).not.toBeInstanceOf(Promise)
    const opened = hooks.openTarget(target)
    expect(opened).not.toBeInstanceOf(Promise)
    expect(Buffer.concat((opened as OpenedFile).chunks as Uint8Array[])).toEqual(small)
    expect(Buffer.from(hooks.loadBytes(target, { maxBytes: 1024 }) as Uint8Array)).toEqual(small)
    expect(hooks.statTarget(target)).not.toBeInstanceOf(Promise)
    const missing = hooks.resolvePath(join(root, 'missing.txt'), undefined) as FsTarget
    expect(() => hooks.openTarget(missing)).toThrow(/ENOENT/)
    // Past the bound, the read goes to the thread pool: a promise.
    const largeTarget = hooks.resolvePath(join(root, 'large.txt'), undefined) as FsTarget
    const loading = hooks.loadBytes(largeTarget, { maxBytes: 2 * 1024 * 1024 })
    expect(loading).toBeInstanceOf(Promise)
    return (loading as Promise<Uint8Array>).then((bytes) => expect(Buffer.from(bytes).equals(large)).toBe(true))
  })
})
