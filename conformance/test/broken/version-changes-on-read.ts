import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the access time is part of the version, so every read makes a new one. */
class VersionChangesOnRead extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    const bytes = await super.loadBytes(target)
    this.put(target.targetKey, bytes)
    return bytes
  }
}

export default brokenConformance('changes the version on read', (limits) => new VersionChangesOnRead(limits))
