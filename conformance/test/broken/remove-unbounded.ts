import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a recursive remove ignores its bound (`maxRemoveEntries`): any tree goes. */
class RemoveUnbounded extends MapFileSystem {
  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return super.removeTarget(target, { ...request, maxEntries: Number.MAX_SAFE_INTEGER })
  }
}

export default brokenConformance('recursive remove without a bound', (limits) => new RemoveUnbounded(limits))
