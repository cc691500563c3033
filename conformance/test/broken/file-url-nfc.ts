import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: fileUrl normalizes the path to NFC, as URLs "should" be: a composed and a decomposed name share one URL. */
class NfcUrl extends MapFileSystem {
  override fileUrl(target: FsTarget): string {
    return super.fileUrl({ ...target, targetKey: target.targetKey.normalize('NFC') as FsTarget['targetKey'] })
  }
}

export default brokenConformance('fileUrl normalizes to NFC', (limits) => new NfcUrl(limits))
