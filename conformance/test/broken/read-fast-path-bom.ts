import { isUtf8 } from 'node:buffer'
import type { FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a public "fast path" for plain valid text: `Buffer#toString` keeps a leading BOM as
 * U+FEFF. Core strips the BOM, so only an override of the public method can return it.
 */
class FastPathKeepsBom extends MapFileSystem {
  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    const node = this.nodes.get(target.targetKey)
    const plain = node?.kind === 'file' && node.bytes.length <= this.maxTextBytes && !node.bytes.subarray(0, 8192).includes(0) && isUtf8(node.bytes)
    if (!plain || opts.signal?.aborted === true) return super.readText(target, opts)
    return Buffer.from(node.bytes.buffer, node.bytes.byteOffset, node.bytes.byteLength).toString('utf8')
  }
}

export default brokenConformance('returns the BOM from a fast path', (limits) => new FastPathKeepsBom(limits))
