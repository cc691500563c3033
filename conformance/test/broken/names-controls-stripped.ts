import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a "sanitizer" drops C0 controls and DEL (other than the newline) from names: `a\tb` is the file `ab`. */
class StripsControls extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    // eslint-disable-next-line no-control-regex -- the broken sanitizer
    return super.resolvePath(path.replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, '') || path, cwd)
  }
}

export default brokenConformance('strips control characters from names', (limits) => new StripsControls(limits))
