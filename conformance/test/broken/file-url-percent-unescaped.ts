import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: fileUrl "tidies" `%25` back into `%`: the name `%20` gets the URL of the name ` `. */
class PercentUnescaped extends MapFileSystem {
  override fileUrl(target: FsTarget): string {
    return super.fileUrl(target).replaceAll('%25', '%')
  }
}

export default brokenConformance('fileUrl leaves % unescaped', (limits) => new PercentUnescaped(limits))
