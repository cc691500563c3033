import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapKey } from './base.js'

/**
 * Broken: with a `cwd`, a relative path's `..` never climbs above that cwd (the path is normalized on
 * its own, then joined): `../x` from `/a/b` is `/a/b/x`, not `/a/x`. Without a cwd it is right.
 */
class ClampsAtCwd extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    if (cwd === undefined || path.startsWith('/')) return super.resolvePath(path, cwd)
    return super.resolvePath(mapKey(path).slice(1) || '.', mapKey(cwd))
  }
}

export default brokenConformance('clamps .. at the cwd', (limits) => new ClampsAtCwd(limits))
