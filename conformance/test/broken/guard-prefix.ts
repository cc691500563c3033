import type { FsTarget, FsVersion } from '@seamfs/core'
import type { UpdateRequest, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a guard matches when the current version starts with it (a lazy comparison of version
 * strings): `g1` passes for `g12`, and the empty version passes for every file.
 */
class PrefixGuard extends MapFileSystem {
  #lenient(target: FsTarget, version: FsVersion): FsVersion {
    const node = this.nodes.get(target.targetKey)
    return node?.kind === 'file' && `g${node.generation}`.startsWith(version) ? (`g${node.generation}` as FsVersion) : version
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const expected =
      request.expected?.kind === 'replaceIfVersion' ? { ...request.expected, version: this.#lenient(target, request.expected.version) } : request.expected
    return super.publishBytes(target, bytes, { ...request, expected })
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const expected = request.expected === undefined ? undefined : { version: this.#lenient(target, request.expected.version) }
    return super.updateBytes(target, { ...request, expected }, transform)
  }
}

export default brokenConformance('matches guards by prefix', (limits) => new PrefixGuard(limits))
