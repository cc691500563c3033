import { isFsError, type FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapKey } from './base.js'

/**
 * Broken: resolve never looks at the parents (a key-value store has no parents to look at), so
 * `file.txt/child` resolves; the write under it still fails, which hides the break from a test
 * that only writes there.
 */
class ResolvesThroughFiles extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    try {
      return await super.resolvePath(path, cwd)
    } catch (err) {
      if (!isFsError(err, 'FS_NOT_FOUND')) throw err
      const key = mapKey(path, mapKey(cwd ?? '/'))
      return { targetKey: FsTargetKey(key), displayPath: key }
    }
  }
}

export default brokenConformance('resolves a path through a file', (limits) => new ResolvesThroughFiles(limits))
