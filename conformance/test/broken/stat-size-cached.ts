import type { FsInfo, FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: `size` comes from a metadata cache filled when the file was created and never refreshed. */
class CachedSize extends MapFileSystem {
  readonly #sizes = new Map<string, number>()

  override put(key: string, bytes: Uint8Array): number {
    if (this.nodes.get(key)?.kind !== 'file') this.#sizes.set(key, bytes.length)
    return super.put(key, bytes)
  }

  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    const size = this.#sizes.get(target.targetKey)
    return info?.type === 'file' && size !== undefined ? { ...info, size } : info
  }
}

export default brokenConformance('reports the size of an earlier content', (limits) => new CachedSize(limits))
