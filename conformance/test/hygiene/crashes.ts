import type { FsDirEntry, FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: listDir takes the whole test worker down, as the kernel's OOM killer would. */
class Crashes extends MapFileSystem {
  override listDir(_target: FsTarget, _opts?: SignalOptions): Promise<FsDirEntry[]> {
    process.kill(process.pid, 'SIGKILL')
    return new Promise(() => undefined)
  }
}

export default mapVariant('listDir kills its process', (limits) => new Crashes(limits))
