import type { FsTarget } from '@seamfs/core'
import { FsTargetKey } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a trailing separator stays in the key: `d/` and `d` are two targets of one directory. */
class KeepsTrailingSlash extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const target = await super.resolvePath(path, cwd)
    if (!path.endsWith('/') || target.targetKey === '/') return target
    return { targetKey: FsTargetKey(`${target.targetKey}/`), displayPath: target.displayPath }
  }
}

export default brokenConformance('keeps a trailing separator in the key', (limits) => new KeepsTrailingSlash(limits))
