import { FsTargetKey, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the path `.` is taken for the store's root, whatever `opts.cwd` says. */
class DotIsRoot extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    if (path === '.' || path === './') return { targetKey: FsTargetKey('/'), displayPath: '/' }
    return super.resolvePath(path, cwd)
  }
}

export default brokenConformance('resolves . to the root', (limits) => new DotIsRoot(limits))
