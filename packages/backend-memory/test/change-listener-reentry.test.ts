/**
 * `LinkLookup` forgets remembered walks when memfs announces a
 * DELETE, but memfs announces a removal BEFORE it makes it (`_emitDeleteRecursive`, then
 * `deleteLink`). Anything that listens to the volume's change bus — `volume.watch` (whose
 * `change` events are delivered synchronously), a `CoreWatcher`, `_core.changes.listen` — and
 * calls the filesystem from its listener re-remembers the link that is about to be detached; if that
 * walk were kept, reads would return the removed file, and edits and writes would land in the
 * detached node and be lost.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { closeAfterEach, memory, readAt } from './support.js'

const watchers: { close(): void }[] = []
afterEach(() => {
  for (const w of watchers.splice(0)) w.close()
})
closeAfterEach()

/** A harness-style watcher: on every change under `/`, it stats the changed path through the filesystem. */
function statOnChange(fs: MemoryFileSystem): void {
  const watcher = fs.volume.watch('/', { recursive: true, persistent: false }, (_event, name) => {
    void fs
      .resolve(`/${String(name)}`)
      .then((t) => fs.stat(t))
      .catch(() => undefined)
  })
  watchers.push(watcher)
}

describe('a listener of the change bus that calls the filesystem while memfs removes', () => {
  it('a file unlinked on the volume is not found afterwards', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    statOnChange(fs)
    fs.volume.unlinkSync('/d/f.txt')
    expect(fs.volume.existsSync('/d/f.txt')).toBe(false)
    expect(await readAt(fs, '/d/f.txt')).toBe('FS_NOT_FOUND')
    expect(await fs.stat(await fs.resolve('/d/f.txt'))).toBeUndefined()
  })

  it('a file removed through the filesystem itself is not found afterwards', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    statOnChange(fs)
    await fs.remove(await fs.resolve('/d/f.txt'))
    expect(await readAt(fs, '/d/f.txt')).toBe('FS_NOT_FOUND')
  })

  it('a write into a directory removed on the volume lands in the volume (not in the detached directory)', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    statOnChange(fs)
    fs.volume.rmSync('/d', { recursive: true })
    const result = await fs.writeText(await fs.resolve('/d/g.txt'), 'kept?')
    expect(result.operation).toBe('create')
    // The write reported success: the bytes must be somewhere the volume can read them.
    expect(fs.volume.existsSync('/d/g.txt')).toBe(true)
  })

  it('an edit of a file replaced on the volume changes the file now at that path', async () => {
    const fs = memory({ 'd/f.txt': 'old text' })
    statOnChange(fs)
    fs.volume.unlinkSync('/d/f.txt')
    fs.volume.writeFileSync('/d/f.txt', 'new text')
    await fs.editText(await fs.resolve('/d/f.txt'), { oldString: 'text', newString: 'TEXT', replaceAll: false }).catch(() => undefined)
    // Whatever the edit answered, it must not have edited the removed file while reporting on the path.
    expect(await readAt(fs, '/d/f.txt')).toBe(String(fs.volume.readFileSync('/d/f.txt', 'utf8')))
    expect(String(fs.volume.readFileSync('/d/f.txt', 'utf8'))).not.toBe('old TEXT')
  })

  it('a plain `_core.changes` listener reading on DELETE leaves no stale answer', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    const core = fs.volume._core
    const stop = core.changes.listen((event) => {
      if ((event.type as number) === 1) void fs.resolve(event.steps.join('/') || '/').catch(() => undefined)
    })
    watchers.push({ close: stop })
    fs.volume.rmSync('/d', { recursive: true })
    fs.volume.mkdirSync('/d')
    fs.volume.writeFileSync('/d/f.txt', 'two')
    expect(await readAt(fs, '/d/f.txt')).toBe('two')
    await fs.writeText(await fs.resolve('/d/f.txt'), 'three')
    expect(String(fs.volume.readFileSync('/d/f.txt', 'utf8'))).toBe('three')
  })
})
