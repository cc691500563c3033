import { checkGuard, FsError, type FsTarget, type FsVersion, type UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: the publish sits in a `finally`: when the edit throws, the unchanged bytes are published anyway (a new version). */
class PublishesOnThrow extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') throw FsError.notRegularFile('edit', target.displayPath)
    checkGuard('edit', target.displayPath, request.expected, current && mapVersion(current.generation))
    if (current === undefined) throw FsError.stale('edit', target.displayPath, 'gone')
    let next = current.bytes
    let generation = 0
    try {
      next = transform(current.bytes)
    } finally {
      generation = this.put(target.targetKey, next)
    }
    return mapVersion(generation)
  }
}

export default brokenConformance('publishes when the edit throws', (limits) => new PublishesOnThrow(limits))
