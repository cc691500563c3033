import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: a same-size rewrite reuses the file's buffer, and the outcome's `before` is that very buffer (the new bytes). */
class BeforeAliased extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind !== 'file' || current.bytes.length !== bytes.length || request.expected !== undefined) {
      return super.publishBytes(target, bytes, request)
    }
    current.bytes.set(bytes)
    const generation = this.put(target.targetKey, current.bytes)
    return { created: false, version: mapVersion(generation), before: current.bytes }
  }
}

export default brokenConformance('reports the new content as before', (limits) => new BeforeAliased(limits))
