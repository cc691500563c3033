/**
 * Memory's `replaceContent` ADOPTS the bytes it is given as the node's buffer instead of copying
 * them, so something outside the node may share its buffer.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const opened: MemoryFileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

function memory(): MemoryFileSystem {
  const fs = new MemoryFileSystem({ cwd: '/work' })
  opened.push(fs)
  return fs
}

describe('edit outcome vs. the adopted node buffer', () => {
  // Above 16 KiB the outcome's `after` is decoded when first read, from the edit's output bytes,
  // which are now the node's own buffer: memfs writes into a node's buffer in place (fd writes,
  // a truncate that grows within capacity), so the outcome of a finished edit changes under the caller.
  it('keeps `after` as the edit left the file when the file is later written in place through the volume', async () => {
    const fs = memory()
    const big = 'a'.repeat(20_000) + '\nneedle\n'
    fs.volume.writeFileSync('/work/big.txt', big)
    const t = await fs.resolve('big.txt')
    const outcome = await fs.editText(t, { oldString: 'needle', newString: 'pin', replaceAll: false })
    // Someone with the volume (the documented way for tests to act behind the filesystem's back) writes in place.
    const fd = fs.volume.openSync('/work/big.txt', 'r+')
    fs.volume.writeSync(fd, Buffer.from('ZZZZ'), 0, 4, 0)
    fs.volume.closeSync(fd)
    expect(await fs.readText(t)).toMatch(/^ZZZZ/)
    expect(outcome.after.startsWith('aaaa')).toBe(true)
    expect(outcome.after.endsWith('\npin\n')).toBe(true)
  })

  it('keeps `after` when the file is shrunk and grown back within its capacity (memfs zero-fills in place)', async () => {
    const fs = memory()
    fs.volume.writeFileSync('/work/big.txt', 'b'.repeat(20_000) + '\nold\n')
    const t = await fs.resolve('big.txt')
    const outcome = await fs.editText(t, { oldString: 'old', newString: 'new', replaceAll: false })
    fs.volume.truncateSync('/work/big.txt', 10)
    fs.volume.truncateSync('/work/big.txt', 20_000)
    expect(outcome.after).toBe('b'.repeat(20_000) + '\nnew\n')
  })
})

describe('writeBytes vs. a caller that keeps the array it passed', () => {
  // Core copies with `Uint8Array.prototype.slice.call(bytes)`, which builds the copy through the
  // array's species constructor: a Uint8Array subclass may hand back a view of a buffer the caller
  // keeps. Memory used to copy again; now it adopts that view, so the caller edits the stored file
  // afterwards, silently (no version change), defeating "changing the array afterwards changes nothing written".
  it('stores a copy of its own, whatever the array species', async () => {
    const fs = memory()
    const shared = new Uint8Array(64)
    class Pooled extends Uint8Array {
      static get [Symbol.species](): Uint8ArrayConstructor {
        return function (n: number) {
          return shared.subarray(0, n)
        } as unknown as Uint8ArrayConstructor
      }
    }
    const t = await fs.resolve('f.bin')
    const written = await fs.writeBytes(t, new Pooled([1, 2, 3]))
    shared.fill(9)
    expect(Array.from(await fs.readBytes(t))).toEqual([1, 2, 3])
    expect((await fs.stat(t))?.version).toBe(written.version)
  })
})
