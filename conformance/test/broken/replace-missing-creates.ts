import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: replaceIfVersion on a missing file creates it (an If-Match the store skips when the key is absent). */
class ReplaceCreatesMissing extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (request.expected?.kind === 'replaceIfVersion' && !this.nodes.has(target.targetKey)) {
      return super.publishBytes(target, bytes, { ...request, expected: undefined })
    }
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('creates on replaceIfVersion of a missing file', (limits) => new ReplaceCreatesMissing(limits))
