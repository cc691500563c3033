import type { FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: keys are case-folded, as on a case-insensitive volume, although names are exact in the
 * contract: `A.txt` and `a.txt` are one file, and the listing shows the folded name.
 */
class FoldsCase extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const target = await super.resolvePath(path, cwd)
    return { targetKey: FsTargetKey(target.targetKey.toLowerCase()), displayPath: target.displayPath.toLowerCase() }
  }
}

export default brokenConformance('folds the case of names', (limits) => new FoldsCase(limits))
