import type { FsTarget, TreePages, TreeRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `listTree` enters the directories it was asked to prune (`.git`), as a walk that never looks at `prune` would. */
class IgnoresPrune extends MapFileSystem {
  protected override listSubtree(target: FsTarget, request: TreeRequest): TreePages | Promise<TreePages> {
    return super.listSubtree(target, { ...request, prune: new Set() })
  }
}

export default brokenConformance('listTree ignores prune', (limits) => new IgnoresPrune(limits))
