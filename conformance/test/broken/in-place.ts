import { FsVersion, normalizeLf, type FsTarget, type FsWriteOutcome, type WriteOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: writes in place, chunk by chunk, so a reader can see a partial file. */
class WritesInPlace extends MapFileSystem {
  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    if (opts.expected !== undefined) return super.writeText(target, content, opts)
    const existed = this.nodes.get(target.targetKey)
    const bytes = new TextEncoder().encode(content)
    for (let n = 0; n < bytes.length; n += 64 * 1024) {
      this.put(target.targetKey, bytes.slice(0, n))
      await new Promise((resolve) => setImmediate(resolve))
    }
    const generation = this.put(target.targetKey, bytes)
    return {
      operation: existed === undefined ? 'create' : 'update',
      version: FsVersion(`g${generation}`),
      before: null,
      after: normalizeLf(content),
    }
  }
}

export default brokenConformance('writes in place', () => new WritesInPlace())
