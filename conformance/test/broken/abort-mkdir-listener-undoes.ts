import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: createDirectory arms a clean-up for an abort and never disarms it: a signal aborted after
 * the call succeeded takes the new directory away again.
 */
class UndoOnAbort extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget, signal?: AbortSignal): Promise<boolean> {
    const created = await super.makeDirectory(target)
    if (created) signal?.addEventListener('abort', () => this.nodes.delete(target.targetKey), { once: true })
    return created
  }
}

export default brokenConformance('undoes a created directory when its signal aborts later', (limits) => new UndoOnAbort(limits))
