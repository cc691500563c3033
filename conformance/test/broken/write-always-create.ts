import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a PUT response does not say whether the key existed, so every write is reported as a create. */
class AlwaysCreate extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return { ...(await super.publishBytes(target, bytes, request)), created: true }
  }
}

export default brokenConformance('reports every write as a create', (limits) => new AlwaysCreate(limits))
