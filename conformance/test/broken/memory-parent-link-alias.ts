import { posix } from 'node:path'
import type { FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with symlinks): only a final symlink is followed for the key; a path through a
 * symlinked directory keeps its own key, so `link-dir/f.txt` and `real-dir/f.txt` are two targets.
 */
class FinalLinkOnly extends MemoryFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const target = await super.resolvePath(path, cwd)
    const abs = posix.resolve(this.cwd, cwd ?? '.', path)
    let finalIsLink = false
    try {
      finalIsLink = this.volume.lstatSync(abs).isSymbolicLink()
    } catch {
      // absent: the key is the path
    }
    return finalIsLink ? target : { targetKey: FsTargetKey(abs), displayPath: target.displayPath }
  }
}

export default brokenMemoryConformance('follows only a final symlink in keys', (limits) => new FinalLinkOnly({ cwd: '/work', ...limits }))
