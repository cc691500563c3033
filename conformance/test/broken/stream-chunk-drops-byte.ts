import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

const CHUNK = 64 * 1024

/** Broken: an off-by-one in the chunk loop: each whole 64 KiB chunk ends a byte short. */
class DropsLastByte extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const bytes = await this.loadBytes(target)
    return (function* () {
      for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, Math.min(at + CHUNK - 1, bytes.length))
    })()
  }
}

export default brokenConformance('streams 64 KiB chunks a byte short', (limits) => new DropsLastByte(limits))
