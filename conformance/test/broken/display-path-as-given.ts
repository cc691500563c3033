import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `displayPath` is the relative path as typed, so resolving it again (without the cwd) names another file. */
class DisplaysPathAsGiven extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const target = await super.resolvePath(path, cwd)
    return path.startsWith('/') ? target : { ...target, displayPath: path }
  }
}

export default brokenConformance('displays the path as given', (limits) => new DisplaysPathAsGiven(limits))
