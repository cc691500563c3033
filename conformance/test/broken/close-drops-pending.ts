import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, tick } from './base.js'

/**
 * Broken: `close()` drops the requests in flight, as a connection pool that forgets its pending
 * callbacks does: a read or a write waiting for its round trip when the filesystem is closed never
 * settles. A call made after `close()` works: only the ones in flight hang.
 */
class ClosesUnderCallers extends MapFileSystem {
  #generation = 0
  override async close(): Promise<void> {
    this.#generation++
  }
  /** A round trip: settles only if the filesystem was not closed meanwhile. */
  async #roundTrip(): Promise<void> {
    const before = this.#generation
    await tick()
    if (this.#generation !== before) await new Promise<never>(() => undefined)
  }
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    await this.#roundTrip()
    return super.loadBytes(target)
  }
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    await this.#roundTrip()
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('leaves the calls in flight at close() unsettled', (limits) => new ClosesUnderCallers(limits))
