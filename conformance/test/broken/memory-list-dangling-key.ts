import { posix } from 'node:path'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with symlinks): a dangling link's entry names the link itself, not what resolving
 * its path gives (the missing path it names): a write through the entry would replace the link
 * instead of creating its target.
 */
class DanglingKeyIsTheLink extends MemoryFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) =>
      e.type === 'other' ? { ...e, target: { targetKey: FsTargetKey(posix.join(target.targetKey, e.name)), displayPath: e.target.displayPath } } : e,
    )
  }
}

export default brokenMemoryConformance('a dangling link is listed as the link', (limits) => new DanglingKeyIsTheLink({ cwd: '/work', ...limits }))
