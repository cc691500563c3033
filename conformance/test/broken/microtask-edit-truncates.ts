import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: an edit empties the file, then writes the edited bytes one promise turn later (a truncate
 * then a write, as `fs.writeFile` does in place). A read at that turn gets an empty file.
 */
class TruncateThenWrite extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind !== 'file') return super.updateBytes(target, request, transform)
    const next = transform(current.bytes)
    this.nodes.set(target.targetKey, { ...current, bytes: new Uint8Array(0) })
    await Promise.resolve()
    this.nodes.set(target.targetKey, current)
    return super.updateBytes(target, request, () => next)
  }
}

export default brokenConformance('empties a file for a promise turn while it edits it', (limits) => new TruncateThenWrite(limits))
