import { FsError, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: createDirectory makes only the last directory (mkdir without -p): a missing parent is FS_NOT_FOUND. */
class NoParents extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget): Promise<boolean> {
    if (!this.nodes.has(target.targetKey) && !this.nodes.has(parentKey(target.targetKey))) throw FsError.notFound('create directory', target.displayPath)
    return super.makeDirectory(target)
  }
}

export default brokenConformance('createDirectory does not create parents', (limits) => new NoParents(limits))
