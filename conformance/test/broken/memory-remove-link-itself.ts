import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): remove unlinks the path as the caller wrote it: a target reached through a link loses the link, and the file stays. */
class UnlinksTheLink extends MemoryFileSystem {
  protected override removeTarget(target: FsTarget, request: RemoveRequest): FsRemoveOutcome | Promise<FsRemoveOutcome> {
    if (!request.recursive && this.#isLink(target.displayPath)) {
      this.volume.unlinkSync(target.displayPath)
      return { type: 'file', entries: 1 }
    }
    return super.removeTarget(target, request)
  }

  #isLink(path: string): boolean {
    try {
      return this.volume.lstatSync(path).isSymbolicLink()
    } catch {
      return false
    }
  }
}

export default brokenMemoryConformance('remove unlinks the link', (limits) => new UnlinksTheLink({ cwd: '/work', ...limits }))
