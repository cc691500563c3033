import { checkGuard, FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: rename checks `expected` against the destination (what it is about to replace), not against the file it moves. */
class GuardsDestination extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    if (request.expected === undefined) return super.renameTarget(from, to, request)
    if (!this.nodes.has(from.targetKey)) throw FsError.stale('rename', from.displayPath, 'gone')
    const existing = this.nodes.get(to.targetKey)
    const version = existing === undefined ? undefined : existing.kind === 'dir' ? 'dir' : mapVersion(existing.generation)
    if (version !== undefined) checkGuard('rename', to.displayPath, request.expected, version as ReturnType<typeof mapVersion>)
    return super.renameTarget(from, to, { ...request, expected: undefined })
  }
}

export default brokenConformance('guards the destination of a rename', (limits) => new GuardsDestination(limits))
