import type { FsRenameOutcome, FsTarget, RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `overwrite: true` clears whatever is at `to` first, an empty directory too, then moves the file there. */
class ClearsDestination extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const there = this.nodes.get(to.targetKey)
    const empty = ![...this.nodes.keys()].some((k) => k.startsWith(`${to.targetKey}/`))
    if (request.overwrite === true && there?.kind === 'dir' && empty && this.nodes.get(from.targetKey)?.kind === 'file') {
      this.nodes.delete(to.targetKey)
      return { ...(await super.renameTarget(from, to, request)), replaced: true }
    }
    return super.renameTarget(from, to, request)
  }
}

export default brokenConformance('overwrite replaces an empty directory', (limits) => new ClearsDestination(limits))
