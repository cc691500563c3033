import { checkGuard, type FsRemoveOutcome, type FsTarget, type RemoveRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, tick } from './base.js'

/** Broken: a guarded remove checks the version, waits (a round trip), then deletes unguarded: racing removers all win. */
class RemoveCheckThenAct extends MapFileSystem {
  protected override async removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> {
    const current = this.nodes.get(target.targetKey)
    if (request.expected === undefined || current?.kind !== 'file') return super.removeTarget(target, request)
    checkGuard('remove', target.displayPath, request.expected, mapVersion(current.generation))
    await tick()
    this.nodes.delete(target.targetKey)
    return { type: 'file', entries: 1 }
  }
}

export default brokenConformance('remove checks its guard before a round trip', (limits) => new RemoveCheckThenAct(limits))
