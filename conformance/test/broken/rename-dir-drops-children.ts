import { FsError, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken (claims renameDirectories): a directory is moved as one node: what was below it is left behind under the old name's keys, unreachable by listing the new one. */
class MovesDirNodeOnly extends MapFileSystem {
  protected override async renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const node = this.nodes.get(from.targetKey)
    if (node?.kind !== 'dir' || this.nodes.has(to.targetKey)) return super.renameTarget(from, to, request)
    if (request.expected !== undefined && request.expected.version !== 'dir') throw FsError.stale('rename', from.displayPath, 'changed')
    await this.makeDirectory(to)
    this.nodes.delete(from.targetKey)
    return { type: 'directory', replaced: false, version: request.expected?.version ?? (await this.statTarget(to))!.version }
  }
}

export default brokenConformance('moves a directory without its content', (limits) => new MovesDirNodeOnly(limits))
