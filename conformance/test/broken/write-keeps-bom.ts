import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, hasBom } from './base.js'

/** Broken: "keeps the file's encoding": a file that had a BOM gets one again, whatever the new content. */
class KeepsBomOnWrite extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    const keep = current?.kind === 'file' && hasBom(current.bytes) && !hasBom(bytes)
    return super.publishBytes(target, keep ? Buffer.concat([Uint8Array.of(0xef, 0xbb, 0xbf), bytes]) : bytes, request)
  }
}

export default brokenConformance('adds the old BOM to new content', (limits) => new KeepsBomOnWrite(limits))
