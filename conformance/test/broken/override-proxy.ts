import type { FsDirEntry, FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a proxy in front of a correct backend answers `listDir` with its own code (locale order).
 * No class overrides anything, so core's constructor cannot see it; the kit must.
 */
function localeOrdered(fs: MapFileSystem): MapFileSystem {
  return new Proxy(fs, {
    get(target, name, receiver) {
      if (name !== 'listDir') return Reflect.get(target, name, receiver) as unknown
      return async (dir: FsTarget, opts?: SignalOptions): Promise<FsDirEntry[]> =>
        (await target.listDir(dir, opts)).sort((a, b) => a.name.localeCompare(b.name))
    },
  })
}

export default brokenConformance('a proxy answers listDir', (limits) => localeOrdered(new MapFileSystem(limits)))
