import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, hasBom } from './base.js'

/** Broken: an edit's publication re-encodes as BOM-less UTF-8: the file's BOM does not stay. */
class EditDropsBom extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return super.updateBytes(target, request, (bytes) => {
      const edited = transform(bytes)
      return hasBom(edited) ? edited.subarray(3) : edited
    })
  }
}

export default brokenConformance('drops the BOM on edit', (limits) => new EditDropsBom(limits))
