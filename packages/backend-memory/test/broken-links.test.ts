/**
 * Links that lead nowhere, as listed and acted on: a dangling link's entry is what `resolve` gives
 * its path (the missing path it names); a link that does not resolve (a loop, a text through a file)
 * keeps its own key, is absent to `stat`, and is never replaced by a rename onto that key.
 */
import { describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

function store(): MemoryFileSystem {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': 'moving', 'plain.txt': 'p' } })
  fs.volume.symlinkSync('missing.txt', '/w/dangling')
  fs.volume.symlinkSync('loop', '/w/loop')
  fs.volume.symlinkSync('plain.txt/x', '/w/through')
  return fs
}

const entry = async (fs: MemoryFileSystem, name: string) => (await fs.listDir(await fs.resolve('.'))).find((e) => e.name === name)

describe('memory: links that lead nowhere', () => {
  it('a dangling link is listed at what resolve gives (the missing path it names); a write through it creates that file', async () => {
    const fs = store()
    const listed = await entry(fs, 'dangling')
    expect(listed?.type).toBe('other')
    expect(listed?.target.targetKey).toBe((await fs.resolve('dangling')).targetKey)
    expect(listed?.target.targetKey).toBe('/w/missing.txt')
    await fs.writeText(listed!.target, 'made')
    expect(fs.volume.readlinkSync('/w/dangling')).toBe('missing.txt')
    expect(fs.volume.readFileSync('/w/missing.txt', 'utf8')).toBe('made')
  })

  it.each(['loop', 'through'])('a %s link keeps its own key: stat is absent, and a rename onto it is refused, the link kept', async (name) => {
    const fs = store()
    const listed = await entry(fs, name)
    expect(listed?.type).toBe('other')
    expect(listed?.target.targetKey).toBe(`/w/${name}`)
    expect(await fs.stat(listed!.target)).toBeUndefined()
    const from = await fs.resolve('f.txt')
    for (const [overwrite, code] of [
      [false, 'FS_NOT_OBSERVED'],
      [true, 'FS_NOT_REGULAR_FILE'],
    ] as const) {
      const err = await fs.rename(from, listed!.target, { overwrite }).catch((e: unknown) => e)
      expect(isFsError(err) ? err.code : err).toBe(code)
    }
    expect(fs.volume.lstatSync(`/w/${name}`).isSymbolicLink()).toBe(true)
    expect(fs.volume.readFileSync('/w/f.txt', 'utf8')).toBe('moving')
  })
})
