import { FsTargetKey, type FsDirEntry, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an entry's target is keyed by the bare name, not resolved: it is no target for a follow-up operation. */
class BareNameTargets extends MapFileSystem {
  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return (await super.listEntries(target)).map((e) => ({ ...e, target: { targetKey: FsTargetKey(e.name), displayPath: e.name } }))
  }
}

export default brokenConformance('lists bare names as targets', (limits) => new BareNameTargets(limits))
