import { checkGuard, FsVersion, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: an object-store PUT: a directory's key is simply overwritten by the file. */
class OverwritesDirectories extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (this.nodes.get(target.targetKey)?.kind !== 'dir') return super.publishBytes(target, bytes, request)
    checkGuard('write', target.displayPath, request.expected, FsVersion('dir'))
    this.nodes.delete(target.targetKey)
    return { created: true, version: mapVersion(this.put(target.targetKey, bytes)), before: null }
  }
}

export default brokenConformance('overwrites a directory', (limits) => new OverwritesDirectories(limits))
