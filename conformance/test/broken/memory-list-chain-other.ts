import { posix } from 'node:path'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): a link is followed one hop only: a link to a link (a chain) is listed as `other`. */
class FollowsOneHop extends MemoryFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) =>
      this.#chains(posix.join(target.targetKey, e.name)) ? { name: e.name, type: 'other', target: e.target } : e,
    )
  }

  #chains(path: string): boolean {
    try {
      if (!this.volume.lstatSync(path).isSymbolicLink()) return false
      const next = posix.resolve(posix.dirname(path), String(this.volume.readlinkSync(path)))
      return this.volume.lstatSync(next).isSymbolicLink()
    } catch {
      return false
    }
  }
}

export default brokenMemoryConformance('follows a link one hop only', (limits) => new FollowsOneHop({ cwd: '/work', ...limits }))
