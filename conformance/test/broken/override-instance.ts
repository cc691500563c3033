import type { FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: the factory sets a "fast path" `readText` on the instance: it decodes the stored bytes
 * itself and keeps a leading BOM. No class overrides anything; the kit must see the instance's own.
 */
function withFastRead(fs: MapFileSystem): MapFileSystem {
  const fastRead = async (target: FsTarget, _opts?: SignalOptions): Promise<string> => {
    const node = fs.nodes.get(target.targetKey)
    return node?.kind === 'file' ? new TextDecoder('utf-8', { ignoreBOM: true }).decode(node.bytes) : ''
  }
  Object.assign(fs, { readText: fastRead })
  return fs
}

export default brokenConformance('sets its own readText on the instance', (limits) => withFastRead(new MapFileSystem(limits)))
