import { FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: rename answers a definite FS_ABORTED the moment its signal aborts, while the move it
 * queued goes on and lands a turn later.
 */
class LandsLater extends MapFileSystem {
  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return new Promise((resolve, reject) => {
      request.signal?.addEventListener('abort', () => reject(FsError.aborted('rename', request.signal?.reason)), { once: true })
      setImmediate(() => void super.renameTarget(from, to, request).then(resolve, reject))
    })
  }
}

export default brokenConformance('answers FS_ABORTED and moves anyway', (limits) => new LandsLater(limits))
