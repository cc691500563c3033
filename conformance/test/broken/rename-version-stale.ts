import { FsVersion, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a rename reports a version the destination does not have. */
class RenameVersionStale extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const outcome = await super.renameTarget(from, to, request)
    return { ...outcome, version: FsVersion(`${outcome.version}-moved`) }
  }
}

export default brokenConformance('rename reports a stale version', (limits) => new RenameVersionStale(limits))
