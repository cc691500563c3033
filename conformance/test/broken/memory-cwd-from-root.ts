import { posix } from 'node:path'
import type { FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store whose cwd is not its root): a relative `opts.cwd` is resolved against the root, not against the backend's cwd. */
class CwdFromRoot extends MemoryFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    return super.resolvePath(path, cwd === undefined ? undefined : posix.resolve('/', cwd))
  }
}

export default brokenMemoryConformance('resolves a relative cwd from the root', (limits) => new CwdFromRoot({ cwd: '/work', ...limits }))
