import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an edit returns the version it checked, not the one it published. */
class EditReturnsOldVersion extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const before = await this.statTarget(target)
    const version = await super.updateBytes(target, request, transform)
    return before?.version ?? version
  }
}

export default brokenConformance('returns the pre-edit version', (limits) => new EditReturnsOldVersion(limits))
