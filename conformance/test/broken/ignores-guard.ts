import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: drops the replaceIfVersion guard (writes unconditionally). */
class IgnoresReplaceGuard extends MapFileSystem {
  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const expected = request.expected?.kind === 'replaceIfVersion' ? undefined : request.expected
    return super.publishBytes(target, bytes, { ...request, expected })
  }
}

export default brokenConformance('ignores replaceIfVersion', (limits) => new IgnoresReplaceGuard(limits))
