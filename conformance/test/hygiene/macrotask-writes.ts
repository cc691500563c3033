import type { FsTarget, FsVersion, UpdateRequest, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Correct, but uneven: reads complete without an event-loop turn, writes only after one (as
 * a store with an in-memory read cache and real write I/O). A kit loop that reads without
 * yielding would starve the writer, and its own timeout, forever.
 */
class MacrotaskWrites extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    await turn()
    return super.publishBytes(target, bytes, request)
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    await turn()
    return super.updateBytes(target, request, transform)
  }
}

export default mapVariant('reads without an event-loop turn, writes after one', (limits) => new MacrotaskWrites(limits))
