import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a rename replaces whatever file is at the destination (the `mv` default). */
class RenameOverwrites extends MapFileSystem {
  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return super.renameTarget(from, to, { ...request, overwrite: request.overwrite === false ? true : request.overwrite })
  }
}

export default brokenConformance('rename overwrites by default', (limits) => new RenameOverwrites(limits))
