import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: loadBytes hands out the stored array itself: a caller that changes what readBytes returned changes the file. */
class ReadBytesShared extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    const node = this.nodes.get(target.targetKey)
    return node?.kind === 'file' ? node.bytes : super.loadBytes(target)
  }
}

export default brokenConformance('readBytes shares the stored bytes', (limits) => new ReadBytesShared(limits))
