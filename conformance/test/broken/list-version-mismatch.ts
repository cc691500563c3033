import { FsVersion, type FsDirEntry, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the listing's version is another token (an ETag) than the one stat returns (a version id). */
class ListingVersionDiffers extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => (e.version === undefined ? e : { ...e, version: FsVersion(`etag-${e.version}`) }))
  }
}

export default brokenConformance('lists another version than stat', (limits) => new ListingVersionDiffers(limits))
