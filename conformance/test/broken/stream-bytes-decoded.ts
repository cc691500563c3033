import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a store that keeps text streams each chunk through a UTF-8 string: invalid bytes (and characters split by a chunk) come out as U+FFFD. */
class DecodedChunks extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const chunks = await super.openBytes(target)
    return (function* () {
      for (const chunk of chunks) yield new Uint8Array(Buffer.from(Buffer.from(chunk).toString('utf8')))
    })()
  }
}

export default brokenConformance('streams bytes through UTF-8 strings', (limits) => new DecodedChunks(limits))
