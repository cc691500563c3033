import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: createDirectory checks only the path itself: a file on the way is turned into a directory (its content lost). */
class ThroughFile extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget): Promise<boolean> {
    if (this.nodes.has(target.targetKey)) return super.makeDirectory(target)
    for (let dir = parentKey(target.targetKey); dir !== '/'; dir = parentKey(dir)) this.nodes.set(dir, { kind: 'dir' })
    this.nodes.set(target.targetKey, { kind: 'dir' })
    return true
  }
}

export default brokenConformance('createDirectory through a file', (limits) => new ThroughFile(limits))
