import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

const UNITS = 32 * 1024

/** Broken: a text file is streamed as slices of its decoded string, 32 Ki code units each: a surrogate pair across a slice is split (two U+FFFD). */
class SlicesText extends MapFileSystem {
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const bytes = await this.loadBytes(target)
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    } catch {
      return super.openBytes(target)
    }
    return (function* () {
      for (let at = 0; at < text.length; at += UNITS) yield new TextEncoder().encode(text.slice(at, at + UNITS))
    })()
  }
}

export default brokenConformance('streams slices of the decoded text', (limits) => new SlicesText(limits))
