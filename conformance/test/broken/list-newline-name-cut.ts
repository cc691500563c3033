import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken (claims newlineInNames): the listing is read line by line: a name with a newline is listed cut at it. */
class LineListing extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => (e.name.includes('\n') ? { ...e, name: e.name.slice(0, e.name.indexOf('\n')) } : e))
  }
}

export default brokenConformance('cuts listed names at a newline', (limits) => new LineListing(limits))
