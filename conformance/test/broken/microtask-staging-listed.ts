import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey, stagingKey } from './base.js'

/**
 * Broken: a write stages its bytes under a name next to the file, then publishes them one
 * promise turn later. Within one turn of the loop, but a listing at that turn shows the staging name.
 */
class StagingForATurn extends MapFileSystem {
  #n = 0
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const staging = stagingKey(target.targetKey, ++this.#n)
    if (this.nodes.get(target.targetKey)?.kind === 'dir' || this.nodes.get(parentKey(target.targetKey))?.kind !== 'dir')
      return super.publishBytes(target, bytes, request)
    this.put(staging, bytes)
    await Promise.resolve()
    this.nodes.delete(staging)
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('lists its staging name for a promise turn', (limits) => new StagingForATurn(limits))
