import type { FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a missing file escapes as a raw Node-style error instead of an FsError. Core
 * translates whatever a hook throws, so only an override of the public method can leak one.
 */
class ThrowsRawErrors extends MapFileSystem {
  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    if (!this.nodes.has(target.targetKey)) {
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${target.displayPath}'`), { code: 'ENOENT' })
    }
    return super.readText(target, opts)
  }
}

export default brokenConformance('throws raw errors', (limits) => new ThrowsRawErrors(limits))
