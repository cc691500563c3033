import type { FsInfo, FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `size` is the length of the decoded text (UTF-16 units), not the byte size. */
class SizeInChars extends MapFileSystem {
  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    const node = this.nodes.get(target.targetKey)
    if (info === undefined || node?.kind !== 'file') return info
    return { ...info, size: new TextDecoder().decode(node.bytes).length }
  }
}

export default brokenConformance('reports size in characters', (limits) => new SizeInChars(limits))
