import { posix } from 'node:path'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): the dirent type is reported as is, so every symlink is listed as `other`, never followed. */
class ListsLinkTypeAsIs extends MemoryFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) =>
      this.#isLink(posix.join(target.targetKey, e.name)) ? { name: e.name, type: 'other', target: e.target } : e,
    )
  }

  #isLink(path: string): boolean {
    try {
      return this.volume.lstatSync(path).isSymbolicLink()
    } catch {
      return false
    }
  }
}

export default brokenMemoryConformance('lists symlinks as other', (limits) => new ListsLinkTypeAsIs({ cwd: '/work', ...limits }))
