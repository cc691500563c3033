import { checkGuard, FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, stagingKey, tick } from './base.js'

/**
 * Broken: a write-then-rename store whose listing shows the staging file while a write is in
 * flight. The guard is checked again at the rename, so guards and atomicity still hold; a
 * finished or failed write leaves nothing behind.
 */
class ListsStaging extends MapFileSystem {
  #staged = 0

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') throw FsError.notRegularFile('write', target.displayPath)
    checkGuard('write', target.displayPath, request.expected, current && mapVersion(current.generation))
    const staging = stagingKey(target.targetKey, ++this.#staged)
    this.put(staging, bytes.slice())
    try {
      await tick()
    } finally {
      this.nodes.delete(staging)
    }
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('lists staging files of writes in flight', (limits) => new ListsStaging(limits))
