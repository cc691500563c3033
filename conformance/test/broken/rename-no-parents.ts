import { FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: rename wants the parent of `to` to exist (POSIX rename(2)): a missing one is FS_NOT_FOUND. */
class NeedsParent extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    if (this.nodes.get(parentKey(to.targetKey))?.kind !== 'dir') throw FsError.notFound('rename', to.displayPath)
    return super.renameTarget(from, to, request)
  }
}

export default brokenConformance('rename does not create parents', (limits) => new NeedsParent(limits))
