import { FsError, FsTargetKey, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: an absolute path is taken as canonical already: its `.`, `..` and doubled or trailing separators are kept in the key. */
class AbsoluteAsGiven extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    if (!path.startsWith('/')) return super.resolvePath(path, cwd)
    for (let dir = parentKey(path); dir !== '/' && dir !== ''; dir = parentKey(dir)) {
      if (this.nodes.get(dir)?.kind === 'file') throw FsError.throughFile('resolve', path)
    }
    return { targetKey: FsTargetKey(path), displayPath: path }
  }
}

export default brokenConformance('keeps dot segments of absolute paths', (limits) => new AbsoluteAsGiven(limits))
