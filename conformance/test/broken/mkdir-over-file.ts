import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: createDirectory replaces a file at its path with a directory (losing the file), and says it created one over an existing directory. */
class MkdirOverFile extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget): Promise<boolean> {
    const existing = this.nodes.get(target.targetKey)
    if (existing === undefined) return super.makeDirectory(target)
    this.nodes.set(target.targetKey, { kind: 'dir' })
    return true
  }
}

export default brokenConformance('createDirectory over a file', (limits) => new MkdirOverFile(limits))
