import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { mapVariant } from './base.js'

/** Hostile: reading a file's bytes returns a promise that never settles; every test that reads can only time out. */
class NeverSettles extends MapFileSystem {
  protected override loadBytes(_target: FsTarget): Promise<Uint8Array> {
    return new Promise(() => undefined)
  }
}

export default mapVariant('reading never settles', (limits) => new NeverSettles(limits))
