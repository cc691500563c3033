import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the outcome's version is the one read before the upload, not the one the write left. */
class StaleWriteVersion extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const before = await this.statTarget(target)
    const result = await super.publishBytes(target, bytes, request)
    return before?.type === 'file' ? { ...result, version: before.version } : result
  }
}

export default brokenConformance('returns the pre-write version', (limits) => new StaleWriteVersion(limits))
