import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: fileUrl on a closed filesystem throws a plain Error, not an FsError. */
class ClosedUrl extends MapFileSystem {
  #closed = false

  override async close(): Promise<void> {
    this.#closed = true
  }

  override fileUrl(target: FsTarget): string {
    if (this.#closed) throw new Error('the filesystem is closed')
    return super.fileUrl(target)
  }
}

export default brokenConformance('fileUrl throws a raw error after close()', (limits) => new ClosedUrl(limits))
