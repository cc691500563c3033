import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a recursive remove empties the directory and leaves the directory itself. */
class EmptiesOnly extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const node = this.nodes.get(target.targetKey)
    const outcome = await super.removeTarget(target, request)
    if (node?.kind === 'dir' && outcome.entries > 1) this.nodes.set(target.targetKey, node)
    return outcome
  }
}

export default brokenConformance('a recursive remove leaves the directory', (limits) => new EmptiesOnly(limits))
