import { FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a guarded rename of a missing file says FS_NOT_FOUND, as an unguarded one does, instead of FS_STALE_VERSION. */
class MissingIsNotFound extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    if (!this.nodes.has(from.targetKey)) throw FsError.notFound('rename', from.displayPath)
    return super.renameTarget(from, to, request)
  }
}

export default brokenConformance('a guarded rename of a missing file is FS_NOT_FOUND', (limits) => new MissingIsNotFound(limits))
