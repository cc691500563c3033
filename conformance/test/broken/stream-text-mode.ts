import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, crlfToLf } from './base.js'

/** Broken: the stream is opened in text mode (CRLF → LF), so streamText does not return line endings as stored. */
class TextModeStream extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const chunks = await super.openBytes(target)
    return (function* () {
      for (const chunk of chunks) yield crlfToLf(chunk)
    })()
  }
}

export default brokenConformance('streams in text mode', (limits) => new TextModeStream(limits))
