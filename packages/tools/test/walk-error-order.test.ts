/**
 * A walk that meets two failures ends with the one a one-at-a-time walk meets first: a
 * directory's link checks come before the next directory's listing.
 */
import { describe, expect, it } from 'vitest'
import { FsError, type FsDirEntry, type FsPathInfo, type FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'

/** `a/x`'s link check and `b`'s listing fail (at the hooks behind `lstat` and `listDir`). */
class Failing extends MemoryFileSystem {
  protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    if (target.displayPath === '/w/b') return Promise.reject(FsError.io('list', target.displayPath, 'listing failed'))
    return Promise.resolve(super.listEntries(target))
  }

  protected override lstatPath(path: string, cwd: string | undefined): Promise<FsPathInfo | undefined> {
    if (path === '/w/a/x') return Promise.reject(FsError.io('stat', path, 'link check failed'))
    return Promise.resolve(super.lstatPath(path, cwd))
  }
}

describe('walk failures', () => {
  it.each([1, 8])('surface in one-at-a-time order (searchConcurrency %i)', async (searchConcurrency) => {
    const fs = new Failing({ cwd: '/w', files: { 'a/x/f.txt': 'x\n', 'b/f.txt': 'x\n' } })
    const tools = createFileToolsByName({ fs, cwd: '/w', config: { searchConcurrency }, sandbox: false })
    for (const result of [await tools.glob.execute({ pattern: '**/*' }), await tools.grep.execute({ pattern: 'x' })]) {
      expect(result.isError).toBe(true)
      expect(result.text).toContain('link check failed')
    }
  })
})
