import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a per-file write counter that restarts at 1 when the file is created again: a deleted file's version guards its successor. */
class PerFileCounter extends MapFileSystem {
  override put(key: string, bytes: Uint8Array): number {
    const old = this.nodes.get(key)
    const generation = old?.kind === 'file' ? old.generation + 1 : 1
    super.put(key, bytes)
    this.nodes.set(key, { kind: 'file', bytes, generation })
    return generation
  }
}

export default brokenConformance('restarts versions on re-creation', (limits) => new PerFileCounter(limits))
