import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

const CHUNK = 64 * 1024

/**
 * Broken: the stream reads ahead into the one buffer it hands out. Each chunk is a view of that
 * buffer, and the read of the next chunk lands in it one event-loop turn after the chunk was
 * handed over, before the caller asked for the next one. A consumer that decodes at once
 * (`streamText`) never notices; one that holds a chunk a moment (`streamBytes`) sees it change.
 */
class ReadAheadIntoOneBuffer extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const bytes = Buffer.concat([...(await super.openBytes(target))])
    const buffer = new Uint8Array(CHUNK)
    const fill = (from: number): number => {
      const part = bytes.subarray(from, from + CHUNK)
      buffer.set(part)
      return part.length
    }
    return (function* () {
      for (let at = 0; at < bytes.length;) {
        const length = fill(at)
        at += length
        const next = at
        // Read ahead: the next chunk goes into the same buffer before it is asked for.
        if (next < bytes.length) setImmediate(() => fill(next))
        yield buffer.subarray(0, length)
      }
    })()
  }
}

export default brokenConformance('reads ahead into the buffer of the chunk the caller holds', (limits) => new ReadAheadIntoOneBuffer(limits))
