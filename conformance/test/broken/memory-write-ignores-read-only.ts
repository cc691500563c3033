import type { Awaitable, FsTarget, FsVersion, UpdateRequest, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/**
 * Broken (a store with modes): writes and edits ignore a file's mode, as a rename over the old
 * file does: a file whose mode grants write permission to no one (0444) is silently replaced.
 * Its mode bits are kept, so only the write-protection rule breaks.
 */
class IgnoresReadOnly extends MemoryFileSystem {
  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return this.#writable(target, () => super.publishBytes(target, bytes, request))
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return this.#writable(target, () => super.updateBytes(target, request, transform))
  }

  /** Runs `publish` with the owner's write bit set on an existing file, then puts its mode back. */
  async #writable<T>(target: FsTarget, publish: () => Awaitable<T>): Promise<T> {
    const mode = this.volume.existsSync(target.targetKey) ? Number(this.volume.statSync(target.targetKey).mode) & 0o777 : undefined
    if (mode === undefined) return publish()
    this.volume.chmodSync(target.targetKey, mode | 0o200)
    try {
      return await publish()
    } finally {
      this.volume.chmodSync(target.targetKey, mode)
    }
  }
}

export default brokenMemoryConformance('replaces a write-protected file', (limits) => new IgnoresReadOnly({ cwd: '/work', ...limits }))
