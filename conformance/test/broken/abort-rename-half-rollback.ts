import { FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/**
 * Broken: an aborted move is rolled back by putting the source back, but the destination is
 * forgotten: both names hold the file afterwards. Unaborted, the move is one synchronous step.
 */
class HalfRollback extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const node = this.nodes.get(from.targetKey)
    const outcome = await super.renameTarget(from, to, request)
    await tick()
    if (request.signal?.aborted === true && node !== undefined) {
      this.nodes.set(from.targetKey, node)
      throw FsError.aborted('rename', request.signal.reason)
    }
    return outcome
  }
}

export default brokenConformance('rolls an aborted move back halfway', (limits) => new HalfRollback(limits))
