import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: listing a directory never returns control: a synchronous loop, where no timer can fire. */
class Spins extends MapFileSystem {
  protected override listEntries(_target: FsTarget): Promise<FsDirEntry[]> {
    for (;;) {
      // spin
    }
  }
}

export default mapVariant('listing spins forever', (limits) => new Spins(limits))
