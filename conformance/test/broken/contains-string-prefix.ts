import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: containment by string prefix, so `/a` "contains" `/ab/c.txt`. */
class PrefixContains extends MapFileSystem {
  override contains(parent: FsTarget, child: FsTarget): boolean {
    return child.targetKey.startsWith(parent.targetKey)
  }
}

export default brokenConformance('contains by string prefix', (limits) => new PrefixContains(limits))
