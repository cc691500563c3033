import { FsError, type FsTarget, type FsVersion, type UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an edit of a missing file is FS_NOT_FOUND (the store's ENOENT) instead of FS_STALE_VERSION. */
class EditMissingNotFound extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    if (!this.nodes.has(target.targetKey)) throw FsError.notFound('edit', target.displayPath)
    return super.updateBytes(target, request, transform)
  }
}

export default brokenConformance('reports an edit of a missing file as not found', (limits) => new EditMissingNotFound(limits))
