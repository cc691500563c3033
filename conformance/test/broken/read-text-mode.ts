import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, crlfToLf } from './base.js'

/** Broken: a text-mode read (CRLF → LF), so readText does not return line endings as stored. */
class TextModeRead extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    return crlfToLf(await super.loadBytes(target))
  }
}

export default brokenConformance('reads in text mode', (limits) => new TextModeRead(limits))
