import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: every remove is recursive: a directory with files goes without `recursive`. */
class RemoveNonEmpty extends MapFileSystem {
  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    return super.removeTarget(target, { ...request, recursive: true })
  }
}

export default brokenConformance('remove takes non-empty directories', (limits) => new RemoveNonEmpty(limits))
