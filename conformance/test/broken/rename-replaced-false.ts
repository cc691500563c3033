import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the outcome of a rename never says it replaced a file. */
class NeverReplaced extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return { ...(await super.renameTarget(from, to, request)), replaced: false }
  }
}

export default brokenConformance('rename says replaced: false', (limits) => new NeverReplaced(limits))
