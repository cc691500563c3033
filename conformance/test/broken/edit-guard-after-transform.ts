import { checkGuard, FsError, type FsTarget, type FsVersion, type UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: the edit runs first and the guard is checked after, so a stale guard reports the match error instead. */
class GuardAfterTransform extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const current = this.nodes.get(target.targetKey)
    if (current === undefined) throw FsError.stale('edit', target.displayPath, 'gone')
    if (current.kind !== 'file') throw FsError.notRegularFile('edit', target.displayPath)
    const next = transform(current.bytes)
    checkGuard('edit', target.displayPath, request.expected, mapVersion(current.generation))
    return mapVersion(this.put(target.targetKey, next))
  }
}

export default brokenConformance('checks the edit guard after matching', (limits) => new GuardAfterTransform(limits))
