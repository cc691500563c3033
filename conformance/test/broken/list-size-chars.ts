import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a listing entry's `size` is the length of the decoded text (UTF-16 units), not the byte size. */
class ListsSizeInChars extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => {
      const node = this.nodes.get(e.target.targetKey)
      return node?.kind === 'file' ? { ...e, size: new TextDecoder().decode(node.bytes).length } : e
    })
  }
}

export default brokenConformance('lists sizes in characters', (limits) => new ListsSizeInChars(limits))
