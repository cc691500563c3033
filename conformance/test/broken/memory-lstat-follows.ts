import type { FsPathInfo } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): lstat follows the final symlink (a `stat` where `lstat` was meant). */
class LstatFollows extends MemoryFileSystem {
  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsPathInfo | undefined> {
    return this.statTarget(await this.resolvePath(path, cwd))
  }
}

export default brokenMemoryConformance('lstat follows the final symlink', (limits) => new LstatFollows({ cwd: '/work', ...limits }))
