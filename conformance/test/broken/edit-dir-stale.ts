import { FsError, type FsTarget, type FsVersion, type UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an object store's view: a directory is no object, so its edit is "gone" (FS_STALE_VERSION), not FS_NOT_REGULAR_FILE. */
class EditDirectoryGone extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    if (this.nodes.get(target.targetKey)?.kind === 'dir') throw FsError.stale('edit', target.displayPath, 'gone')
    return super.updateBytes(target, request, transform)
  }
}

export default brokenConformance('reports an edit of a directory as stale', (limits) => new EditDirectoryGone(limits))
