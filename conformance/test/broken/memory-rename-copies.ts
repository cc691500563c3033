import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (declares `rename: 'atomic'`): a file is moved by writing its bytes anew at the new name,
 * as a copying store does: content and version are right, but the file is not the one that was
 * there (its mtime is the move's), which `atomic` promises it is.
 */
class RenameCopies extends MemoryFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const outcome = await super.renameTarget(from, to, request)
    if (outcome.type !== 'file') return outcome
    const bytes = await this.loadBytes(to, { signal: undefined, maxBytes: Number.MAX_SAFE_INTEGER })
    const { version } = await this.publishBytes(to, bytes, { expected: undefined, signal: undefined, beforeMaxBytes: 0 })
    return { ...outcome, version }
  }
}

export default brokenMemoryConformance('declares an atomic rename and copies the bytes', (limits) => new RenameCopies({ cwd: '/work', ...limits }))
