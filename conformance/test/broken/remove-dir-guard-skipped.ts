import type { FsRemoveOutcome, FsTarget, RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: remove guards files only: a directory goes whatever version `expected` names. */
class FilesOnlyGuard extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const dir = this.nodes.get(target.targetKey)?.kind === 'dir'
    return super.removeTarget(target, dir ? { ...request, expected: undefined } : request)
  }
}

export default brokenConformance('ignores the guard of a directory remove', (limits) => new FilesOnlyGuard(limits))
