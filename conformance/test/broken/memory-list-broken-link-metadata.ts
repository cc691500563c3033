import { posix } from 'node:path'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { FsVersion } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): a broken symlink is listed as `other` but with the link's own metadata (lstat's), not without. */
class BrokenLinkMetadata extends MemoryFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => {
      if (e.type !== 'other' || e.version !== undefined) return e
      const st = this.volume.lstatSync(posix.join(target.targetKey, e.name))
      return { ...e, version: FsVersion(`lstat:${Number(st.ino)}`), size: Number(st.size) }
    })
  }
}

export default brokenMemoryConformance('lists metadata of a broken symlink', (limits) => new BrokenLinkMetadata({ cwd: '/work', ...limits }))
