import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the key is pasted into the URL unencoded: `a b.txt` and `a%20b.txt` parse to one URL path. */
class RawFileUrl extends MapFileSystem {
  override fileUrl(target: FsTarget): string {
    return `map://${target.targetKey}`
  }
}

export default brokenConformance('builds fileUrl without percent-encoding', (limits) => new RawFileUrl(limits))
