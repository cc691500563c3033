import { FsError, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a `..` that climbs above the root is refused (FS_NOT_FOUND) instead of staying at the root, as POSIX paths do. */
class RefusesAboveRoot extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    let depth = 0
    for (const part of `${path.startsWith('/') ? '' : (cwd ?? '/')}/${path}`.split('/')) {
      if (part === '..') depth--
      else if (part !== '' && part !== '.') depth++
      if (depth < 0) throw FsError.notFound('resolve', path)
    }
    return super.resolvePath(path, cwd)
  }
}

export default brokenConformance('refuses .. above the root', (limits) => new RefusesAboveRoot(limits))
