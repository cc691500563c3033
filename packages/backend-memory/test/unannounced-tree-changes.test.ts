/**
 * Remembered walks are forgotten only on what memfs ANNOUNCES.
 * A few of the `Superblock`'s public helpers change the tree without a word: `deleteLink` (the
 * detach `unlink`/`rmdir`/`rm` use, after their event) and `createLink` (memfs's `createChild`,
 * which replaces an existing name). A call that walks the live tree sees them; a remembered walk
 * that outlived them would read a detached file and lose writes.
 */
import { describe, expect, it } from 'vitest'
import { closeAfterEach, memory, readAt } from './support.js'
import type { Link } from '@jsonjoy.com/fs-core'

closeAfterEach()

describe('tree changes memfs does not announce (`volume._core` helpers)', () => {
  it('a directory detached with `_core.deleteLink` is gone for the filesystem too', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    expect(await readAt(fs, '/d/f.txt')).toBe('one')
    const core = fs.volume._core
    core.deleteLink(core.getLink(['d']) as Link)
    expect(fs.volume.existsSync('/d')).toBe(false)
    expect(await readAt(fs, '/d/f.txt')).toBe('FS_NOT_FOUND')
  })

  it('a file replaced with `_core.createLink` is the one read and written', async () => {
    const fs = memory({ 'd/f.txt': 'one' })
    expect(await readAt(fs, '/d/f.txt')).toBe('one')
    const core = fs.volume._core
    core.createLink(core.getLink(['d']) as Link, 'f.txt')
    expect(String(fs.volume.readFileSync('/d/f.txt', 'utf8'))).toBe('')
    expect(await readAt(fs, '/d/f.txt')).toBe('')
    await fs.writeText(await fs.resolve('/d/f.txt'), 'two')
    expect(String(fs.volume.readFileSync('/d/f.txt', 'utf8'))).toBe('two')
  })
})
