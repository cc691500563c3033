import { FsError, type FsRemoveOutcome, type FsTarget, type RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/** Broken: the signal is looked at after the delete went through: the caller is told a definite FS_ABORTED, and the file is gone. */
class RemoveThenAbort extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    await tick()
    const outcome = await super.removeTarget(target, request)
    if (request.signal?.aborted === true) throw FsError.aborted('remove', request.signal.reason)
    return outcome
  }
}

export default brokenConformance('reports FS_ABORTED after removing', (limits) => new RemoveThenAbort(limits))
