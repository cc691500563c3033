import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { MountFileSystem, SandboxedFileSystem, type FileSystem, type FsCapabilities } from '@seamfs/core'
import { FsVersion } from '@seamfs/core/backend'
import { expectFsErrorAsync } from './helpers.js'

/**
 * A memory store that says it does not write, with hooks that would: every mutation that reached
 * them would change the store, so a refusal here is core's, made before any hook.
 */
class ReadOnlyMemory extends MemoryFileSystem {
  override readonly capabilities: FsCapabilities = Object.freeze({ ...new MemoryFileSystem().capabilities, readOnly: true })
}

const edit = { oldString: 'one', newString: 'two', replaceAll: false }

/** Every mutation of the contract on `fs`, each as [name, call]. */
async function mutations(fs: FileSystem): Promise<Array<readonly [string, () => Promise<unknown>]>> {
  const file = await fs.resolve('f.txt')
  const dir = await fs.resolve('d')
  return [
    ['writeText', () => fs.writeText(file, 'changed')],
    ['writeText of a new file', async () => fs.writeText(await fs.resolve('new.txt'), 'x')],
    ['writeBytes', () => fs.writeBytes(file, Uint8Array.of(0x78))],
    ['editText', () => fs.editText(file, edit)],
    ['editText guarded', () => fs.editText(file, edit, { expected: { version: FsVersion('v') } })],
    ['remove', () => fs.remove(file)],
    ['remove recursive', () => fs.remove(dir, { recursive: true })],
    ['rename', async () => fs.rename(file, await fs.resolve('g.txt'))],
    ['rename onto itself', () => fs.rename(file, file)],
    ['createDirectory', async () => fs.createDirectory(await fs.resolve('e'))],
  ]
}

describe('a store that does not write (capabilities.readOnly)', () => {
  it('every mutation is FS_PERMISSION_DENIED with its verb and path, and the store is unchanged, also through a sandbox', async () => {
    const store = new ReadOnlyMemory({ files: { 'f.txt': 'one', 'd/inner.txt': 'inner' } })
    const before = store.toJSON()
    for (const fs of [store, new SandboxedFileSystem(store, { mode: 'full-access', workspaceRoot: '/' })]) {
      for (const [name, call] of await mutations(fs)) {
        const err = await expectFsErrorAsync(call(), 'FS_PERMISSION_DENIED')
        expect(err.message, name).toMatch(/read-only store/)
        expect([typeof err.verb, typeof err.path], name).toEqual(['string', 'string'])
      }
    }
    expect(store.toJSON()).toEqual(before)
    expect(await store.readText(await store.resolve('f.txt'))).toBe('one')
  })

  it('a mount table treats it as a read-only mount, and takes how it writes from the stores that write', async () => {
    const docs = new ReadOnlyMemory({ files: { 'a.md': 'docs' } })
    const work = new MemoryFileSystem({ files: { 'w.txt': 'work' } })
    const fs = new MountFileSystem({ '/': work, '/docs': docs })
    // The read-only store declares no remove, rename or mkdir: the table keeps them for the writer.
    expect([fs.capabilities.remove, fs.capabilities.rename, fs.capabilities.createDirectory, fs.capabilities.readOnly]).toEqual([
      work.capabilities.remove,
      work.capabilities.rename,
      work.capabilities.createDirectory,
      undefined,
    ])
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/docs/a.md'), 'x'), 'FS_PERMISSION_DENIED')
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/docs/new.md'), 'x'), 'FS_PERMISSION_DENIED')
    expect(docs.toJSON()).toEqual(new ReadOnlyMemory({ files: { 'a.md': 'docs' } }).toJSON())
    await fs.writeText(await fs.resolve('/w.txt'), 'changed')
    expect(await work.readText(await work.resolve('w.txt'))).toBe('changed')
    expect(new MountFileSystem({ '/': docs }).capabilities.readOnly).toBe(true)
  })
})
