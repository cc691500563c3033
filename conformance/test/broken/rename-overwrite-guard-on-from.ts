import { checkGuard, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: `overwrite: { version }` is checked against the file being moved instead of the file it replaces. */
class OverwriteGuardsSource extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const { overwrite } = request
    const source = this.nodes.get(from.targetKey)
    if (typeof overwrite !== 'object' || source?.kind !== 'file' || !this.nodes.has(to.targetKey)) return super.renameTarget(from, to, request)
    checkGuard('rename', from.displayPath, overwrite, mapVersion(source.generation))
    return super.renameTarget(from, to, { ...request, overwrite: true })
  }
}

export default brokenConformance('checks overwrite against the source', (limits) => new OverwriteGuardsSource(limits))
