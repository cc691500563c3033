import type { FsDirEntry, FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: listing a directory takes the whole test worker down, as the kernel's OOM killer would. */
class Crashes extends MapFileSystem {
  protected override listEntries(_target: FsTarget): Promise<FsDirEntry[]> {
    process.kill(process.pid, 'SIGKILL')
    return new Promise(() => undefined)
  }
}

export default mapVariant('listing kills its process', (limits) => new Crashes(limits))
