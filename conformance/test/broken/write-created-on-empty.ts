import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `created` is told from the previous bytes' length: overwriting an empty file says `create`. */
class EmptyIsNew extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    const result = await super.publishBytes(target, bytes, request)
    return { ...result, created: current?.kind !== 'file' || current.bytes.length === 0 }
  }
}

export default brokenConformance('overwriting an empty file says create', (limits) => new EmptyIsNew(limits))
