import { FsError, type FsRemoveOutcome, type FsTarget, type RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a directory is taken for non-empty without looking: an empty one is FS_NOT_EMPTY unless recursive. */
class EveryDirNotEmpty extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    if (this.nodes.get(target.targetKey)?.kind === 'dir' && !request.recursive && request.expected === undefined)
      throw FsError.notEmpty('remove', target.displayPath)
    return super.removeTarget(target, request)
  }
}

export default brokenConformance('an empty directory is FS_NOT_EMPTY', (limits) => new EveryDirNotEmpty(limits))
