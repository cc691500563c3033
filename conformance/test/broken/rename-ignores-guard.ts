import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the source's `expected` version is dropped: a file changed since it was read is moved anyway. */
class RenameIgnoresGuard extends MapFileSystem {
  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return super.renameTarget(from, to, { ...request, expected: undefined })
  }
}

export default brokenConformance('rename ignores expected', (limits) => new RenameIgnoresGuard(limits))
