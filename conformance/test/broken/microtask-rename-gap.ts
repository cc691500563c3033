import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a move takes the file away from its old name, then (one promise turn later, no I/O in
 * between) puts it at the new one. No macrotask ever sees the gap; a reader at the right promise
 * turn finds neither name holding the file.
 */
class RenameGap extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const node = this.nodes.get(from.targetKey)
    if (node?.kind !== 'file' || this.nodes.has(to.targetKey)) return super.renameTarget(from, to, request)
    this.nodes.delete(from.targetKey)
    await Promise.resolve()
    this.nodes.set(from.targetKey, node)
    return super.renameTarget(from, to, request)
  }
}

export default brokenConformance('leaves a promise turn where neither name holds a moved file', (limits) => new RenameGap(limits))
