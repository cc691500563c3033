import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, hasBom } from './base.js'

/** Broken: the listing gives a file's size as its text would have it: a leading BOM is not counted (stat counts it). */
class ListsTextSize extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => {
      const node = this.nodes.get(e.target.targetKey)
      return node?.kind === 'file' && hasBom(node.bytes) ? { ...e, size: node.bytes.length - 3 } : e
    })
  }
}

export default brokenConformance('lists sizes without the BOM', (limits) => new ListsTextSize(limits))
