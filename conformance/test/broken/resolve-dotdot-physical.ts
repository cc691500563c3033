import { FsError, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem, normalize } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `..` is walked in the store, not in the text: `missing/../f.txt` is FS_NOT_FOUND because `missing` does not exist. */
class PhysicalDotDot extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    let at = path.startsWith('/') ? '/' : normalize(cwd ?? '/', '/')
    for (const part of path.split('/')) {
      if (part === '..' && !this.nodes.has(at)) throw FsError.notFound('resolve', path)
      at = normalize(part, at)
    }
    return super.resolvePath(path, cwd)
  }
}

export default brokenConformance('walks .. in the store', (limits) => new PhysicalDotDot(limits))
