import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a paged listing (1000 keys a page) whose next page starts after its continuation key, which was that page's first entry. */
class DropsPageHeads extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const entries = (await super.listEntries(target)).sort((a, b) => (a.target.targetKey < b.target.targetKey ? -1 : 1))
    return entries.filter((_, i) => i === 0 || i % 1000 !== 0)
  }
}

export default brokenConformance('drops the first entry of every page after the first', (limits) => new DropsPageHeads(limits))
