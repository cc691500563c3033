/**
 * `readBytes` answers an array of its own, whatever the store answered: a view of Node's shared
 * `Buffer` pool (what `Buffer.from` and `Buffer.concat` give for small sizes) would show the caller,
 * through its `buffer`, whatever else the process allocated beside it. Core copies such an answer;
 * an answer that is its own array is passed on as it is.
 */
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import type { FsTarget } from '@seamfs/core'
import { FileSystemLayer, type ReadRequest } from '@seamfs/core/backend'

/** Answers `readBytes` with what `answer` makes of the inner store's bytes. */
class Answering extends FileSystemLayer {
  constructor(
    inner: MemoryFileSystem,
    private readonly answer: (bytes: Uint8Array) => Uint8Array,
  ) {
    super(inner)
  }

  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return this.answer(await super.loadBytes(target, request))
  }
}

async function readThrough(answer: (bytes: Uint8Array) => Uint8Array, content: Uint8Array): Promise<{ bytes: Uint8Array; answered: Uint8Array[] }> {
  const answered: Uint8Array[] = []
  const fs = new Answering(new MemoryFileSystem({ cwd: '/w' }), (bytes) => {
    const made = answer(bytes)
    answered.push(made)
    return made
  })
  const target = await fs.resolve('f.bin')
  await fs.writeBytes(target, content)
  return { bytes: await fs.readBytes(target), answered }
}

describe('readBytes: an array of its own', () => {
  const content = Uint8Array.from([1, 2, 3, 4, 5])

  it('a view of the shared pool is copied into an array of its own, a Buffer still', async () => {
    const { bytes, answered } = await readThrough((b) => Buffer.from(b), content)
    const pooled = answered[0] as Buffer
    // The premise: Node handed the layer a view of a larger buffer.
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length)
    expect(bytes).not.toBe(pooled)
    expect(Buffer.isBuffer(bytes)).toBe(true)
    expect([bytes.byteOffset, bytes.buffer.byteLength]).toEqual([0, content.length])
    expect(Buffer.from(bytes).equals(Buffer.from(content))).toBe(true)
  })

  it('a view into a larger plain array is copied too', async () => {
    const { bytes } = await readThrough((b) => {
      const wide = new Uint8Array(b.length + 10).fill(0xee)
      wide.set(b, 4)
      return wide.subarray(4, 4 + b.length)
    }, content)
    expect(Buffer.isBuffer(bytes)).toBe(false)
    expect([bytes.byteOffset, bytes.buffer.byteLength]).toEqual([0, content.length])
    expect(Array.from(bytes)).toEqual(Array.from(content))
  })

  it('shared memory, and a view that is not a Uint8Array, are copied byte for byte', async () => {
    const shared = await readThrough((b) => {
      const own = new Uint8Array(new SharedArrayBuffer(b.length))
      own.set(b)
      return own
    }, content)
    expect(shared.bytes.buffer instanceof SharedArrayBuffer).toBe(false)
    expect(Array.from(shared.bytes)).toEqual(Array.from(content))
    // A store that breaks the contract's type: its bytes, never its elements, and nothing lost.
    const wide = await readThrough((b) => new Uint16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length - (b.length % 2))) as never, content)
    expect(Array.from(wide.bytes)).toEqual(Array.from(content.subarray(0, 4)))
    const viewed = await readThrough((b) => new DataView(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)) as never, content)
    expect(Array.from(viewed.bytes)).toEqual(Array.from(content))
  })

  it('an answer that is its own array is passed on as it is (no copy)', async () => {
    const { bytes, answered } = await readThrough((b) => new Uint8Array(b), content)
    expect(bytes).toBe(answered[0])
  })

  it('an empty file is an empty array of its own', async () => {
    const { bytes } = await readThrough((b) => Buffer.from(b), new Uint8Array(0))
    expect([bytes.length, bytes.byteOffset, bytes.buffer.byteLength]).toEqual([0, 0, 0])
  })
})
