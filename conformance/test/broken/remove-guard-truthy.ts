import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: remove tests its guard for truthiness: an empty `expected.version` is taken for no guard, and the file goes. */
class TruthyGuard extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return super.removeTarget(target, { ...request, expected: request.expected?.version ? request.expected : undefined })
  }
}

export default brokenConformance('an empty remove guard is no guard', (limits) => new TruthyGuard(limits))
