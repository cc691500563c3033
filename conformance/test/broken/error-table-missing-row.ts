import { errorCodeOf, type ErrorRow, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

const eisdir = (path: string): Error => Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: 'EISDIR' })

/** Broken: reads of a directory throw the store's EISDIR, and the error table has no row for it: FS_IO_ERROR, not FS_NOT_REGULAR_FILE. */
class MissingEisdirRow extends MapFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    if (this.nodes.get(target.targetKey)?.kind === 'dir') throw eisdir(target.displayPath)
    return super.loadBytes(target)
  }

  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    if (this.nodes.get(target.targetKey)?.kind === 'dir') throw eisdir(target.displayPath)
    return super.openBytes(target)
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    const code = errorCodeOf(err)
    if (code === 'ENOENT') return { code: 'FS_NOT_FOUND', reason: 'not found' }
    if (code === 'EACCES') return { code: 'FS_PERMISSION_DENIED', reason: 'permission denied' }
    return undefined
  }
}

export default brokenConformance('misses EISDIR in its error table', (limits) => new MissingEisdirRow(limits))
