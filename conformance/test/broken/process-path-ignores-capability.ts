import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: overrides the public `processPath` (instead of the `processPathOf` hook) and returns a
 * path no process can open, though `capabilities.processPath` is false.
 */
class ProcessPathAnyway extends MapFileSystem {
  override processPath(target: FsTarget): string {
    return `/map${target.targetKey}`
  }
}

export default brokenConformance('returns a processPath it does not have', (limits) => new ProcessPathAnyway(limits))
