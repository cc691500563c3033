import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `opts.cwd` is never passed on: every relative path resolves against the backend's cwd. */
class IgnoresCwd extends MapFileSystem {
  protected override async resolvePath(path: string, _cwd: string | undefined): Promise<FsTarget> {
    return super.resolvePath(path, undefined)
  }
}

export default brokenConformance('ignores opts.cwd', (limits) => new IgnoresCwd(limits))
