import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, TUNING } from './base.js'

/**
 * Broken: the stream yields whole lines only (a line reader): it holds everything since the last
 * line end, so a file of one long line is held whole. Lines of any sane length stay small.
 */
class WholeLinesStream extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const chunks = await super.openBytes(target)
    return (function* () {
      let held: Buffer[] = []
      for (const chunk of chunks) {
        const end = chunk.lastIndexOf(0x0a)
        if (end < 0) {
          held.push(Buffer.from(chunk))
          continue
        }
        yield Buffer.concat([...held, chunk.subarray(0, end + 1)])
        held = [Buffer.from(chunk.subarray(end + 1))]
      }
      if (held.length > 0) yield Buffer.concat(held)
    })()
  }
}

// Files large enough to tell a bounded stream from a held one (the memory clause measures from 8 MiB).
export default {
  ...brokenConformance('streams whole lines only', (limits) => new WholeLinesStream(limits)),
  options: { ...TUNING, largeFileBytes: 12 * 1024 * 1024 },
}
