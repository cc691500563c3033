import type { FsDirEntry, FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: listDir never returns control: a synchronous loop, where no timer can fire. */
class Spins extends MapFileSystem {
  override listDir(_target: FsTarget, _opts?: SignalOptions): Promise<FsDirEntry[]> {
    for (;;) {
      // spin
    }
  }
}

export default mapVariant('listDir spins forever', (limits) => new Spins(limits))
