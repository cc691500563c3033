import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a guarded remove drops its guard: a file rewritten since it was read is deleted anyway. */
class RemoveIgnoresGuard extends MapFileSystem {
  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return super.removeTarget(target, { ...request, expected: undefined })
  }
}

export default brokenConformance('remove ignores expected', (limits) => new RemoveIgnoresGuard(limits))
