import type { FsTarget, FsVersion, UpdateRequest } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: an edit tests its guard for truthiness: an empty `expected.version` is taken for no guard, and the edit goes through. */
class TruthyEditGuard extends MapFileSystem {
  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return super.updateBytes(target, { ...request, expected: request.expected?.version ? request.expected : undefined }, transform)
  }
}

export default brokenConformance('an empty edit guard is no guard', (limits) => new TruthyEditGuard(limits))
