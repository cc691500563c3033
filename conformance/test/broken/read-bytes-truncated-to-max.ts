import type { FsTarget, ReadRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: readBytes asks the store for a range of `maxBytes` (a ranged GET): a larger file comes back cut, never FS_TOO_LARGE. */
class RangedRead extends MapFileSystem {
  protected override async loadBytes(target: FsTarget, request?: ReadRequest): Promise<Uint8Array> {
    const bytes = await super.loadBytes(target)
    return request === undefined || request.transient === true ? bytes : bytes.slice(0, request.maxBytes)
  }
}

export default brokenConformance('readBytes cuts at maxBytes', (limits) => new RangedRead(limits))
