import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, hasBom } from './base.js'

/** Broken: content that begins with U+FEFF is stored without it ("never store a BOM"), not as given. */
class StripsBomOnWrite extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return super.publishBytes(target, hasBom(bytes) ? bytes.subarray(3) : bytes, request)
  }
}

export default brokenConformance('strips a leading U+FEFF from written content', (limits) => new StripsBomOnWrite(limits))
