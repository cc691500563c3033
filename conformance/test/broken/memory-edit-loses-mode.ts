import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with modes): an edit is published as a new file renamed over the old one,
 * created with the default mode: the file's mode is not kept.
 */
class EditLosesMode extends MemoryFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const version = await super.updateBytes(target, request, transform)
    this.volume.chmodSync(target.targetKey, 0o644)
    return (await this.statTarget(target))?.version ?? version
  }
}

export default brokenMemoryConformance('loses the mode on edit', (limits) => new EditLosesMode({ cwd: '/work', ...limits }))
