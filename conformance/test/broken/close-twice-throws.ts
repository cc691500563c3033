import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: close() refuses a second call, as if closing were not idempotent. */
class ClosesOnce extends MapFileSystem {
  #closed = false

  override async close(): Promise<void> {
    if (this.#closed) throw new Error('already closed')
    this.#closed = true
  }
}

export default brokenConformance('close() twice throws', (limits) => new ClosesOnce(limits))
