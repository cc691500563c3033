import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a recursive remove counts what was below the directory, not the directory itself. */
class CountsChildren extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const outcome = await super.removeTarget(target, request)
    return outcome.entries > 1 ? { ...outcome, entries: outcome.entries - 1 } : outcome
  }
}

export default brokenConformance('miscounts a recursive remove', (limits) => new CountsChildren(limits))
