import { checkGuard, FsError, type FsTarget, type FsVersion, type UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, tick } from './base.js'

/**
 * Broken: read, edit, write back, with a round trip in between and no critical section; only a
 * guarded edit checks its version again at the write. Two unguarded edits of one file race, and
 * one of them is lost.
 */
class LostUpdate extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const { displayPath: path, targetKey: key } = target
    const read = this.nodes.get(key)
    if (read?.kind === 'dir') throw FsError.notRegularFile('edit', path)
    checkGuard('edit', path, request.expected, read && mapVersion(read.generation))
    if (read === undefined) throw FsError.stale('edit', path, 'gone')
    await tick()
    const next = transform(read.bytes)
    const now = this.nodes.get(key)
    if (request.expected !== undefined) checkGuard('edit', path, request.expected, now?.kind === 'file' ? mapVersion(now.generation) : undefined)
    return mapVersion(this.put(key, next))
  }
}

export default brokenConformance('loses one of two concurrent unguarded edits', (limits) => new LostUpdate(limits))
