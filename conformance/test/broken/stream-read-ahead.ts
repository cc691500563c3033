import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, TUNING } from './base.js'

/**
 * Broken: the stream reads ahead without waiting for the reader: a pump copies the next chunk into
 * a queue at every event-loop turn, whether or not the reader asked. A reader that keeps pace sees
 * a short queue; one that pauses finds the file piling up in memory.
 */
class ReadAheadStream extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const source = (await super.openBytes(target))[Symbol.iterator]()
    const queue: Uint8Array[] = []
    let ended = false
    let wake: (() => void) | undefined
    const pump = (): void => {
      const next = source.next()
      if (next.done === true) ended = true
      else queue.push(next.value)
      wake?.()
      if (!ended) setImmediate(pump)
    }
    pump()
    // Core takes async chunks as well (`ByteChunks`); the example's signature names only the plain kind.
    return (async function* () {
      for (;;) {
        const chunk = queue.shift()
        if (chunk !== undefined) yield chunk
        else if (ended) return
        else await new Promise<void>((resolve) => (wake = resolve))
      }
    })() as unknown as Iterable<Uint8Array>
  }
}

// Files large enough to tell a bounded stream from a held one (the memory clause measures from 8 MiB).
export default {
  ...brokenConformance('streams by reading ahead without waiting for the reader', (limits) => new ReadAheadStream(limits)),
  options: { ...TUNING, largeFileBytes: 12 * 1024 * 1024 },
}
