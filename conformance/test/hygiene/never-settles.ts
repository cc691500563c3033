import type { FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: readText returns a promise that never settles; every test that reads can only time out. */
class NeverSettles extends MapFileSystem {
  override readText(_target: FsTarget, _opts?: SignalOptions): Promise<string> {
    return new Promise(() => undefined)
  }
}

export default mapVariant('readText never settles', (limits) => new NeverSettles(limits))
