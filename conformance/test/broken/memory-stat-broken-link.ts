import type { FsInfo, FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): a failed stat falls back to lstat, so a dangling symlink is reported (as `other`) instead of absent. */
class StatFallsBackToLstat extends MemoryFileSystem {
  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    if (info !== undefined) return info
    const own = await this.lstatPath(target.displayPath, undefined)
    return own === undefined ? undefined : { version: own.version, type: own.type === 'symlink' ? 'other' : own.type }
  }
}

export default brokenMemoryConformance('stats a dangling symlink', (limits) => new StatFallsBackToLstat({ cwd: '/work', ...limits }))
