import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `encodeURI` leaves `#` and `?` unencoded, so `a#b.txt` is a URL with a fragment. */
class EncodeUriFileUrl extends MapFileSystem {
  override fileUrl(target: FsTarget): string {
    return `map://${encodeURI(target.targetKey)}`
  }
}

export default brokenConformance('builds fileUrl with encodeURI', (limits) => new EncodeUriFileUrl(limits))
