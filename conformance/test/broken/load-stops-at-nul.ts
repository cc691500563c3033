import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: whole-file reads stop at the first NUL, as a C string would. */
class StopsAtNul extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    const bytes = await super.loadBytes(target)
    const nul = bytes.indexOf(0)
    return nul === -1 ? bytes : bytes.slice(0, nul)
  }
}

export default brokenConformance('reads stop at the first NUL', (limits) => new StopsAtNul(limits))
