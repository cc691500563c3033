import { FsError, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the file is opened on the first read, so a missing file fails the iterator instead of the returned promise. */
class LazyOpen extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const nodes = this.nodes
    return (function* () {
      const node = nodes.get(target.targetKey)
      if (node === undefined) throw FsError.notFound('read', target.displayPath)
      if (node.kind !== 'file') throw FsError.notRegularFile('read', target.displayPath)
      for (let at = 0; at < node.bytes.length; at += 64 * 1024) yield node.bytes.subarray(at, at + 64 * 1024)
    })()
  }
}

export default brokenConformance('opens streams lazily', (limits) => new LazyOpen(limits))
