import type { FsTarget, FsWriteOutcome, WriteOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** A correct backend so far. */
class Middle extends MapFileSystem {}

/**
 * Broken: two classes down, `writeText` is redefined as an accessor on the prototype (no `override`
 * keyword for the lint to see) that writes without core's checks: a guard is ignored.
 */
class WritesBlind extends Middle {}
Object.defineProperty(WritesBlind.prototype, 'writeText', {
  get(this: WritesBlind) {
    return async (target: FsTarget, content: string, _opts?: WriteOptions): Promise<FsWriteOutcome> => {
      const before = this.nodes.get(target.targetKey)
      this.put(target.targetKey, new TextEncoder().encode(content))
      return { operation: before === undefined ? 'create' : 'update', version: (await this.stat(target))!.version, before: null, after: content }
    }
  },
})

export default brokenConformance('defines writeText as an accessor, two classes down', (limits) => new WritesBlind(limits))
