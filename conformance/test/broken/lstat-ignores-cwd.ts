import type { FsInfo } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: lstat drops `opts.cwd` (resolve honours it). */
class LstatIgnoresCwd extends MapFileSystem {
  protected override async lstatPath(path: string, _cwd: string | undefined): Promise<FsInfo | undefined> {
    return super.lstatPath(path, undefined)
  }
}

export default brokenConformance('lstat ignores cwd', (limits) => new LstatIgnoresCwd(limits))
