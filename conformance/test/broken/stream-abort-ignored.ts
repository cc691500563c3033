import type { FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: the signal is honoured when the stream is opened, never after: an abort between
 * chunks is ignored. Core checks the signal between chunks, so only an override of the
 * public method can drop it.
 */
class StreamIgnoresLateAbort extends MapFileSystem {
  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    if (opts.signal?.aborted === true) return super.streamText(target, opts)
    return super.streamText(target, {})
  }
}

export default brokenConformance('ignores an abort during a stream', (limits) => new StreamIgnoresLateAbort(limits))
