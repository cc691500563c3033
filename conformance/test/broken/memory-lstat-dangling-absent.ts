import { posix } from 'node:path'
import type { FsPathInfo } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): lstat checks that a link leads somewhere: a dangling link is reported absent instead of a symlink. */
class DanglingAbsent extends MemoryFileSystem {
  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsPathInfo | undefined> {
    const info = await super.lstatPath(path, cwd)
    if (info?.type !== 'symlink') return info
    return this.volume.existsSync(posix.resolve(this.cwd, cwd ?? '.', path)) ? info : undefined
  }
}

export default brokenMemoryConformance('lstat of a dangling link is undefined', (limits) => new DanglingAbsent({ cwd: '/work', ...limits }))
