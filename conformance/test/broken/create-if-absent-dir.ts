import { FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: createIfAbsent is an O_EXCL open: anything there, a directory too, is "exists" (FS_NOT_OBSERVED). */
class ExclusiveOnDirectory extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (request.expected?.kind === 'createIfAbsent' && this.nodes.has(target.targetKey)) throw FsError.notObserved(target.displayPath)
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('reports createIfAbsent on a directory as not observed', (limits) => new ExclusiveOnDirectory(limits))
