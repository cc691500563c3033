import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: an overwrite stores the first half of the new bytes, then the whole one promise turn
 * later, as a store written in two appends would. A read at that turn gets half a file.
 */
class TornForATurn extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind !== 'file' || request.expected !== undefined || bytes.length < 2) return super.publishBytes(target, bytes, request)
    this.put(target.targetKey, bytes.slice(0, bytes.length >> 1))
    await Promise.resolve()
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('shows half a write for a promise turn', (limits) => new TornForATurn(limits))
