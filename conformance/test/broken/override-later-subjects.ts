import type { FsInfo, FsTarget, SignalOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

let built = 0

/**
 * Broken: the factory's first subjects are correct (the kit's probe among them); later ones carry a
 * `stat` of their own that reports sizes in characters. The kit must check every subject, not only the probe.
 */
function subject(fs: MapFileSystem): MapFileSystem {
  if (++built <= 2) return fs
  const stat = async (target: FsTarget, opts?: SignalOptions): Promise<FsInfo | undefined> => {
    const info = await MapFileSystem.prototype.stat.call(fs, target, opts)
    const node = fs.nodes.get(target.targetKey)
    return info === undefined || node?.kind !== 'file' ? info : { ...info, size: new TextDecoder().decode(node.bytes).length }
  }
  return Object.assign(fs, { stat })
}

export default brokenConformance('later subjects carry their own stat', (limits) => subject(new MapFileSystem(limits)))
