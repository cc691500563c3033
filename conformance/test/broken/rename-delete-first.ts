import { FsVersion, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/** Broken: a file move deletes the source, then (a round trip later) writes the destination: for a moment neither name holds it. */
class RenameDeleteFirst extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const node = this.nodes.get(from.targetKey)
    if (node?.kind !== 'file' || this.nodes.has(to.targetKey)) return super.renameTarget(from, to, request)
    this.nodes.delete(from.targetKey)
    await tick()
    const generation = this.put(to.targetKey, node.bytes)
    return { type: 'file', replaced: false, version: FsVersion(`g${generation}`) }
  }
}

export default brokenConformance('rename deletes before it copies', (limits) => new RenameDeleteFirst(limits))
