import type { FsDirEntry, FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a listing tells directories by their children: an empty directory is listed as a file. */
class EmptyDirIsFile extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const keys = [...this.nodes.keys()]
    return (await super.listEntries(target)).map((e) =>
      e.type === 'directory' && !keys.some((k) => k.startsWith(`${e.target.targetKey}/`)) ? { ...e, type: 'file', size: 0 } : e,
    )
  }
}

export default brokenConformance('lists empty directories as files', (limits) => new EmptyDirIsFile(limits))
