import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/**
 * Hostile: every listing contains its own directory, as "." (a readdir that keeps the dot
 * entries): a walk that follows directories by name recurses without end.
 */
class SelfListing extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return [...(await super.listEntries(target)), { name: '.', type: 'directory', target }]
  }
}

export default mapVariant('listings contain their own directory', (limits) => new SelfListing(limits))
