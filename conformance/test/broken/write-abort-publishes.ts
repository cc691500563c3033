import { FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/** Broken: the signal is checked after the upload was published: the caller is told FS_ABORTED, and the store changed. */
class AbortAfterPublish extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    await tick()
    const result = await super.publishBytes(target, bytes, request)
    if (request.signal?.aborted === true) throw FsError.aborted('write', request.signal.reason)
    return result
  }
}

export default brokenConformance('reports FS_ABORTED after publishing', (limits) => new AbortAfterPublish(limits))
