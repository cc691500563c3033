import type { FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion } from './base.js'

/** Broken: replaceIfVersion compares the size recorded with the version, not the version itself. */
class GuardComparesSize extends MapFileSystem {
  readonly #sizes = new Map<string, number>()

  override put(key: string, bytes: Uint8Array): number {
    const generation = super.put(key, bytes)
    this.#sizes.set(mapVersion(generation), bytes.length)
    return generation
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    const expected = request.expected
    if (expected?.kind === 'replaceIfVersion' && current?.kind === 'file' && this.#sizes.get(expected.version) === current.bytes.length) {
      const same = { kind: 'replaceIfVersion', version: mapVersion(current.generation) } as const
      return super.publishBytes(target, bytes, { ...request, expected: same })
    }
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('compares sizes in replaceIfVersion', (limits) => new GuardComparesSize(limits))
