import { posix } from 'node:path'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): a listed link whose text climbs (`../x`) gets a target resolved from the filesystem's cwd, not from the link's directory. */
class ClimbsFromCwd extends MemoryFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const entries = await super.listEntries(target)
    return Promise.all(
      entries.map(async (e) => {
        const text = this.#linkText(posix.join(target.targetKey, e.name))
        return text?.startsWith('..') === true ? { ...e, target: await this.resolve(posix.resolve(this.cwd, text)) } : e
      }),
    )
  }

  #linkText(path: string): string | undefined {
    try {
      return this.volume.lstatSync(path).isSymbolicLink() ? String(this.volume.readlinkSync(path)) : undefined
    } catch {
      return undefined
    }
  }
}

export default brokenMemoryConformance('resolves climbing links from the cwd', (limits) => new ClimbsFromCwd({ cwd: '/work', ...limits }))
