import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: createDirectory says it created a directory that was already there. */
class AlwaysCreated extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget): Promise<boolean> {
    await super.makeDirectory(target)
    return true
  }
}

export default brokenConformance('createDirectory of an existing directory says created', (limits) => new AlwaysCreated(limits))
