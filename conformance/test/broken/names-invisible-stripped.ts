import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: zero-width and bidi marks (U+200B–U+200D, U+202A–U+202E, U+FEFF) are dropped from names as "invisible". */
class StripsInvisible extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    return super.resolvePath(path.replace(/[\u200b-\u200d\u202a-\u202e\ufeff]/g, '') || path, cwd)
  }
}

export default brokenConformance('strips zero-width and bidi marks from names', (limits) => new StripsInvisible(limits))
