import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a prefix listing: a missing directory is an empty page, not FS_NOT_FOUND. */
class MissingListsEmpty extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    if (!this.nodes.has(target.targetKey)) return []
    return super.listEntries(target)
  }
}

export default brokenConformance('lists a missing directory as empty', (limits) => new MissingListsEmpty(limits))
