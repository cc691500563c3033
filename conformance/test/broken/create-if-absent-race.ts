import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/** Broken: createIfAbsent checks, then (after a round trip) writes unconditionally: two creators can both see "absent". */
class CreateCheckThenAct extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (request.expected?.kind !== 'createIfAbsent' || this.nodes.has(target.targetKey)) return super.publishBytes(target, bytes, request)
    await tick()
    return super.publishBytes(target, bytes, { ...request, expected: undefined })
  }
}

export default brokenConformance('overwrites a concurrent creator', (limits) => new CreateCheckThenAct(limits))
