import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, crlfToLf } from './base.js'

/** Broken: the edit reads the file in text mode (CRLF → LF), so a CRLF file loses its untouched line endings. */
class EditReadsTextMode extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return super.updateBytes(target, request, (bytes) => transform(crlfToLf(bytes)))
  }
}

export default brokenConformance('edits after a text-mode read', (limits) => new EditReadsTextMode(limits))
