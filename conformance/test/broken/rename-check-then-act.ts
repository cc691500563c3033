import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/** Broken: a rename checks the destination is free, waits (a round trip), then moves with overwrite: racing movers clobber each other. */
class RenameCheckThenAct extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    if (request.overwrite !== false || this.nodes.has(to.targetKey)) return super.renameTarget(from, to, request)
    await tick()
    return super.renameTarget(from, to, { ...request, overwrite: true })
  }
}

export default brokenConformance('rename checks the destination before a round trip', (limits) => new RenameCheckThenAct(limits))
