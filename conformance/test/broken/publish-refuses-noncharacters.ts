import { FsError, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an over-eager validator refuses content holding a noncharacter (U+FFFE, U+FFFF), which is valid UTF-8. */
class RefusesNoncharacters extends MapFileSystem {
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    if (/[\ufffe\uffff]/.test(new TextDecoder().decode(bytes))) throw FsError.at('FS_NOT_TEXT', 'write', target.displayPath, 'holds a noncharacter')
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('refuses noncharacters', (limits) => new RefusesNoncharacters(limits))
