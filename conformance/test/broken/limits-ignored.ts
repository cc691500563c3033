import type { FsLimits } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the constructor takes the size limits and does not pass them on: the defaults apply. */
class DropsLimits extends MapFileSystem {
  constructor(_limits?: FsLimits) {
    super()
  }
}

export default brokenConformance('drops its size limits', (limits) => new DropsLimits(limits))
