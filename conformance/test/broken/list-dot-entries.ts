import { FsTargetKey, type FsDirEntry, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/**
 * Broken: readdir's own `.` and `..` are passed through (an SFTP server returns them). A listing
 * that contains its own directory must fail the listing tests, not send the kit's tree walk into
 * unbounded recursion.
 */
class ListsDotEntries extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const entries = await super.listEntries(target)
    const parent = parentKey(target.targetKey)
    return [
      ...entries,
      { name: '.', type: 'directory', target },
      { name: '..', type: 'directory', target: { targetKey: FsTargetKey(parent), displayPath: parent } },
    ]
  }
}

export default brokenConformance('lists . and ..', (limits) => new ListsDotEntries(limits))
