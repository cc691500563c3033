/**
 * A lock entry is renewed and released by PATH (`dirname(key)` opened afresh each time).
 * A rename of the directory while a write inside it holds its lock moves the entry with the
 * directory: the holder's renewals and its release then look in the old (missing) directory and
 * silently do nothing. The entry is left behind at the new place, under this live pid: every
 * later writer of that file waits a whole lease (here: fails after lockWaitMs), and the directory,
 * though its listing is empty, cannot be removed.
 */
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { scratchDir } from './scratch.js'

async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work
    return 'ok'
  } catch (err) {
    return isFsError(err) ? `${err.code}: ${err.message}` : String(err)
  }
}

describe('a directory renamed while a write inside it holds its lock entry', () => {
  it('leaves no lock entry behind: the file can be written at its new path at once, the directory removed', async () => {
    const root = scratchDir('review-dirmv')
    mkdirSync(join(root, 'd'))
    writeFileSync(join(root, 'd', 'f.txt'), 'one\n')
    let reached!: () => void
    const inside = new Promise<void>((r) => (reached = r))
    let go!: () => void
    const released = new Promise<void>((r) => (go = r))
    const writer = new LocalFileSystem({ cwd: root, hooks: { beforeCommit: async () => (reached(), released) } })
    const other = new LocalFileSystem({ cwd: root, lockWaitMs: 1000 })

    const edit = outcome(writer.editText(await writer.resolve('d/f.txt'), { oldString: 'one', newString: 'two', replaceAll: false }))
    await inside
    // Another caller renames the directory: it locks `d` and `e` in the parent, not the files below.
    await other.rename(await other.resolve('d'), await other.resolve('e'))
    go()
    const edited = await edit
    expect(
      ['ok', 'FS_STALE_VERSION'].some((c) => edited.startsWith(c)),
      edited,
    ).toBe(true)

    expect
      .soft(
        readdirSync(join(root, 'e')).filter((n) => n.startsWith('.seamfs-lock-')),
        'lock entries left in the moved directory',
      )
      .toEqual([])
    // The next writer of the file at its new path does not wait for a lease nobody holds.
    const next = await outcome(other.writeText(await other.resolve('e/f.txt'), 'three\n'))
    expect.soft(next).toBe('ok')
    // With the file gone, the directory lists empty and can be removed.
    for (const n of readdirSync(join(root, 'e'))) if (!n.startsWith('.seamfs-')) unlinkSync(join(root, 'e', n))
    expect((await other.listDir(await other.resolve('e'))).map((x) => x.name)).toEqual([])
    expect.soft(await outcome(other.remove(await other.resolve('e')))).toBe('ok')
    await writer.close()
    await other.close()
  })
})
