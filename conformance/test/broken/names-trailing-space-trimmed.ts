import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken (a Windows habit): trailing spaces and dots of each name are dropped: `a ` and `a.` are the file `a`. */
class TrimsNames extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const trimmed = path
      .split('/')
      .map((name) => (name === '.' || name === '..' ? name : name.replace(/[ .]+$/, '') || name))
      .join('/')
    return super.resolvePath(trimmed, cwd)
  }
}

export default brokenConformance('trims trailing spaces and dots of names', (limits) => new TrimsNames(limits))
