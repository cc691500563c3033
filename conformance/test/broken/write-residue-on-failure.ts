import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, stagingKey } from './base.js'

/** Broken: the staging copy is written before the checks and is not removed when the write fails. */
class LeavesStagingOnFailure extends MapFileSystem {
  #staged = 0

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const staging = stagingKey(target.targetKey, ++this.#staged)
    this.put(staging, bytes.slice())
    const result = await super.publishBytes(target, bytes, request)
    this.nodes.delete(staging)
    return result
  }
}

export default brokenConformance('leaves staging residue after a failed write', (limits) => new LeavesStagingOnFailure(limits))
