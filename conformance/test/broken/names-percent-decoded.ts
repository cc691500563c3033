import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: paths are taken for URL-encoded and decoded: the names `%20` and ` ` are one file. */
class DecodesPercent extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    let decoded = path
    try {
      decoded = decodeURIComponent(path)
    } catch {
      // not valid percent-encoding: used as is
    }
    return super.resolvePath(decoded, cwd)
  }
}

export default brokenConformance('percent-decodes paths', (limits) => new DecodesPercent(limits))
