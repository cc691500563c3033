import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: the listing gives names in Unicode normal form C, as some stores (and some sync tools) do:
 * a name stored decomposed (`e` + U+0301) is listed composed (`é`), a name no path reaches.
 */
class NormalizesNames extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => ({ ...e, name: e.name.normalize('NFC') }))
  }
}

export default brokenConformance('lists names in NFC', (limits) => new NormalizesNames(limits))
