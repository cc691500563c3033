import { checkGuard, FsTargetKey, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with symlinks): a write is renamed onto the path as given, so writing a symlink
 * replaces the link by a file and leaves its target as it was.
 */
class ReplacesLinks extends MemoryFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const link = target.displayPath
    if (!this.#isLink(link)) return super.publishBytes(target, bytes, request)
    const current = await this.statTarget(target)
    checkGuard('write', link, request.expected, current?.version)
    this.volume.unlinkSync(link)
    this.volume.writeFileSync(link, bytes)
    const written = await this.statTarget({ targetKey: FsTargetKey(link), displayPath: link })
    return { created: current === undefined, version: written?.version ?? current?.version ?? ('' as never), before: null }
  }

  #isLink(path: string): boolean {
    try {
      return this.volume.lstatSync(path).isSymbolicLink()
    } catch {
      return false
    }
  }
}

export default brokenMemoryConformance('replaces a symlink it writes', (limits) => new ReplacesLinks({ cwd: '/work', ...limits }))
