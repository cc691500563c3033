import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

const SAMPLE = 64 * 1024

/** Broken: a "fast content hash" of the size and the first 64 KiB: a change further in, at the same size, keeps the version. */
class HeadSampleVersion extends MapFileSystem {
  override put(key: string, bytes: Uint8Array): number {
    const old = this.nodes.get(key)
    if (old?.kind !== 'file' || old.bytes.length !== bytes.length) return super.put(key, bytes)
    const n = Math.min(SAMPLE, bytes.length)
    if (!Buffer.from(old.bytes.subarray(0, n)).equals(Buffer.from(bytes.subarray(0, n)))) return super.put(key, bytes)
    this.nodes.set(key, { kind: 'file', bytes, generation: old.generation })
    return old.generation
  }
}

export default brokenConformance('versions by a 64 KiB head sample', (limits) => new HeadSampleVersion(limits))
