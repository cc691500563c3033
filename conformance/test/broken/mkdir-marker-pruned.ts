import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken (claims native directories): a remove prunes the parents it leaves empty, as an S3 prefix would vanish, so a created directory goes with its last file. */
class PrunesParents extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const outcome = await super.removeTarget(target, request)
    for (let dir = parentKey(target.targetKey); dir !== '/'; dir = parentKey(dir)) {
      if ([...this.nodes.keys()].some((k) => k.startsWith(`${dir}/`))) break
      this.nodes.delete(dir)
    }
    return outcome
  }
}

export default brokenConformance('prunes emptied parents on remove', (limits) => new PrunesParents(limits))
