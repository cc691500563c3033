import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a rewrite of the same size keeps the version (like a size + seconds-mtime token). */
class SizeOnlyVersion extends MapFileSystem {
  override put(key: string, bytes: Uint8Array): number {
    const old = this.nodes.get(key)
    if (old?.kind !== 'file' || old.bytes.length !== bytes.length) return super.put(key, bytes)
    this.nodes.set(key, { kind: 'file', bytes, generation: old.generation })
    return old.generation
  }
}

export default brokenConformance('version ignores same-size rewrites', (limits) => new SizeOnlyVersion(limits))
