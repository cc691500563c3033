import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, hasBom } from './base.js'

/** Broken: loadBytes drops a leading BOM itself (core drops one more in readText; readBytes loses it). */
class LoadStripsBom extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    const bytes = await super.loadBytes(target)
    return hasBom(bytes) ? bytes.slice(3) : bytes
  }
}

export default brokenConformance('loadBytes strips the BOM', (limits) => new LoadStripsBom(limits))
