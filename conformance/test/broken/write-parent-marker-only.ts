import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: a write creates its immediate parent directory only (one marker, not `mkdir -p`): the ancestors stay missing. */
class ParentMarkerOnly extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const missing: string[] = []
    for (let dir = parentKey(parentKey(target.targetKey)); dir !== '/' && !this.nodes.has(dir); dir = parentKey(dir)) missing.push(dir)
    const result = await super.publishBytes(target, bytes, request)
    for (const dir of missing) this.nodes.delete(dir)
    return result
  }
}

export default brokenConformance('creates the immediate parent only', (limits) => new ParentMarkerOnly(limits))
