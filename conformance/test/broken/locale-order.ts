import type { FsDirEntry, FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: lists in localeCompare order, which depends on the host's locale. Core sorts what
 * the `listEntries` hook returns, so only an override of the public method can break the order.
 */
class LocaleOrder extends MapFileSystem {
  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    return (await super.listDir(target, opts)).sort((a, b) => a.name.localeCompare(b.name))
  }
}

export default brokenConformance('lists in localeCompare order', (limits) => new LocaleOrder(limits))
