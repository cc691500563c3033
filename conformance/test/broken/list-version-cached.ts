import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: the listing keeps the versions it saw in a cache keyed by name, which nothing invalidates: an overwritten file is listed with its old version. */
class CachedVersions extends MapFileSystem {
  readonly #seen = new Map<string, NonNullable<FsDirEntry['version']>>()

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => {
      if (e.type !== 'file' || e.version === undefined) return e
      const cached = this.#seen.get(e.target.targetKey)
      if (cached === undefined) this.#seen.set(e.target.targetKey, e.version)
      return { ...e, version: cached ?? e.version }
    })
  }
}

export default brokenConformance('lists cached versions', (limits) => new CachedVersions(limits))
