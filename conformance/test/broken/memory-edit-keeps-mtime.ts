import type { FsInfo, FsTarget, FsVersion, UpdateRequest, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (declares `mtime`): an edit puts the file's modification time back to what it was, as an
 * editor that "preserves timestamps" does; writes move it, edits never do.
 */
class EditKeepsMtime extends MemoryFileSystem {
  readonly #kept = new Map<string, number>()
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const before = (await super.statTarget(target))?.mtime
    const version = await super.updateBytes(target, request, transform)
    if (before !== undefined) this.#kept.set(target.targetKey, before)
    return version
  }
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    this.#kept.delete(target.targetKey)
    return super.publishBytes(target, bytes, request)
  }
  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    const kept = this.#kept.get(target.targetKey)
    return info === undefined || kept === undefined || info.type !== 'file' ? info : { ...info, mtime: kept }
  }
}

export default brokenMemoryConformance('keeps the mtime across edits', (limits) => new EditKeepsMtime({ cwd: '/work', ...limits }))
