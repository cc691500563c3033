import { FsVersion, type FsDirEntry, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a directory's listed version is built another way than stat builds it (its name, not its state). */
class DirVersionByName extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => (e.type === 'directory' ? { ...e, version: FsVersion(`dir:${e.name}`) } : e))
  }
}

export default brokenConformance('lists directory versions stat does not give', (limits) => new DirVersionByName(limits))
