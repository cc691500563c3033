import { FsVersion, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: writes in place, chunk by chunk, so a reader can see a partial file. */
class WritesInPlace extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (request.expected !== undefined) return super.publishBytes(target, bytes, request)
    const existed = this.nodes.get(target.targetKey)
    for (let n = 0; n < bytes.length; n += 64 * 1024) {
      this.put(target.targetKey, bytes.slice(0, n))
      await new Promise((resolve) => setImmediate(resolve))
    }
    const generation = this.put(target.targetKey, bytes)
    return { created: existed === undefined, version: FsVersion(`g${generation}`), before: null }
  }
}

export default brokenConformance('writes in place', (limits) => new WritesInPlace(limits))
