import { checkGuard, FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, tick } from './base.js'

/** Broken: replaceIfVersion checks the version, then uploads and publishes without checking again: racing writers all win. */
class ReplaceCheckThenAct extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (request.expected?.kind !== 'replaceIfVersion') return super.publishBytes(target, bytes, request)
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') throw FsError.notRegularFile('write', target.displayPath)
    checkGuard('write', target.displayPath, request.expected, current && mapVersion(current.generation))
    await tick()
    return super.publishBytes(target, bytes, { ...request, expected: undefined })
  }
}

export default brokenConformance('checks replaceIfVersion before the upload only', (limits) => new ReplaceCheckThenAct(limits))
