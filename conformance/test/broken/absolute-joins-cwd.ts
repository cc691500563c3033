import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an absolute path is joined onto `opts.cwd` (`path.join(cwd, p)` where `path.resolve` was meant). */
class AbsoluteJoinsCwd extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    return super.resolvePath(cwd !== undefined && path.startsWith('/') ? `.${path}` : path, cwd)
  }
}

export default brokenConformance('joins an absolute path onto cwd', (limits) => new AbsoluteJoinsCwd(limits))
