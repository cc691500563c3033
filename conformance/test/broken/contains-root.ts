import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `child` is under `parent + '/'`, which for the root `/` is `//`: the root contains nothing but itself. */
class RootContainsNothing extends MapFileSystem {
  override contains(parent: FsTarget, child: FsTarget): boolean {
    return child.targetKey === parent.targetKey || child.targetKey.startsWith(`${parent.targetKey}/`)
  }
}

export default brokenConformance('forgets the root in contains', (limits) => new RootContainsNothing(limits))
