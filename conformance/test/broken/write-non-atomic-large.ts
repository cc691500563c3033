import { FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, tick } from './base.js'

const PART = 1024 * 1024

/** Broken: above one part (1 MiB) an unguarded write is a multipart upload whose parts become visible as they land. */
class NonAtomicMultipart extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (bytes.length <= PART || request.expected !== undefined) return super.publishBytes(target, bytes, request)
    const existed = this.nodes.get(target.targetKey)
    if (existed?.kind === 'dir') throw FsError.notRegularFile('write', target.displayPath)
    for (let n = PART; n < bytes.length; n += PART) {
      this.put(target.targetKey, bytes.slice(0, n))
      await tick()
    }
    const generation = this.put(target.targetKey, bytes)
    return { created: existed === undefined, version: mapVersion(generation), before: existed?.bytes ?? null }
  }
}

export default brokenConformance('writes non-atomically above 1 MiB', (limits) => new NonAtomicMultipart(limits))
