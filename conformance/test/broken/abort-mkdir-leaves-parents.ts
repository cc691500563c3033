import { FsError, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey, tick } from './base.js'

/** Broken: createDirectory makes the missing parents, then gives up on an abort: the parents stay behind a definite FS_ABORTED. */
class ParentsFirst extends MapFileSystem {
  protected override async makeDirectory(target: FsTarget, signal?: AbortSignal): Promise<boolean> {
    const made: string[] = []
    for (let dir = parentKey(target.targetKey); dir !== '/' && !this.nodes.has(dir); dir = parentKey(dir)) made.unshift(dir)
    for (const dir of made) this.nodes.set(dir, { kind: 'dir' })
    await tick()
    if (signal?.aborted === true) throw FsError.aborted('create directory', signal.reason)
    return super.makeDirectory(target)
  }
}

export default brokenConformance('leaves the parents of an aborted createDirectory', (limits) => new ParentsFirst(limits))
