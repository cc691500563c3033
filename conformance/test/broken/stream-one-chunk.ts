import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the whole file is read into one buffer and streamed as one chunk: memory grows with the file. */
class OneChunkStream extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    return [Buffer.concat([...(await super.openBytes(target))])]
  }
}

export default brokenConformance('streams the whole file as one chunk', (limits) => new OneChunkStream(limits))
