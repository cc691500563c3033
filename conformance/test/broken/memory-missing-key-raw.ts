import { posix } from 'node:path'
import type { FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with symlinks): an existing path's key is its realpath, a missing path's key
 * the path as resolved (realpath fails on it): under a symlinked directory, a file's key changes
 * when it is created.
 */
class MissingKeyNotCanonical extends MemoryFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const target = await super.resolvePath(path, cwd)
    const abs = posix.resolve(this.cwd, cwd ?? '.', path)
    return this.volume.existsSync(abs) ? target : { targetKey: FsTargetKey(abs), displayPath: target.displayPath }
  }
}

export default brokenMemoryConformance('keys a missing path without realpath', (limits) => new MissingKeyNotCanonical({ cwd: '/work', ...limits }))
