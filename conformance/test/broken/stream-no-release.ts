import { FsError, type FsTarget, type FsVersion, type UpdateRequest, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a store that refuses to replace a file open for reading (a Windows sharing violation),
 * whose stream releases the file only when read to the end: a consumer that stops early (the
 * iterator's `return()`) leaves it open for good.
 */
class StreamNeverReleased extends MapFileSystem {
  readonly #readers = new Map<string, number>()

  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const chunks = await super.openBytes(target)
    const readers = this.#readers
    const key = target.targetKey
    readers.set(key, (readers.get(key) ?? 0) + 1)
    return (function* () {
      yield* chunks
      readers.set(key, (readers.get(key) ?? 1) - 1)
    })()
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    this.#assertClosed(target, 'write')
    return super.publishBytes(target, bytes, request)
  }

  protected override async updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    this.#assertClosed(target, 'edit')
    return super.updateBytes(target, request, transform)
  }

  #assertClosed(target: FsTarget, verb: 'write' | 'edit'): void {
    if ((this.#readers.get(target.targetKey) ?? 0) > 0) {
      throw FsError.io(verb, target.displayPath, 'the file is open for reading (sharing violation)', { retryable: true })
    }
  }
}

export default brokenConformance('never releases a stream stopped early', (limits) => new StreamNeverReleased(limits))
