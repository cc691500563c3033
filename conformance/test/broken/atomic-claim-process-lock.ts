import { checkGuard, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance, mapVersion, tick } from './base.js'

/**
 * Broken: the guards are enforced by a lock inside this process: check, a round trip, then an
 * unconditional put, one writer at a time. Every seamfs writer waits its turn, so seamfs writers
 * never race; but the backend still declares its guards `atomic` (by the store itself, against any
 * writer), and a writer that is not seamfs, landing in the round trip, is overwritten unseen.
 */
class ProcessLockedGuards extends MapFileSystem {
  #queue: Promise<unknown> = Promise.resolve()
  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const run = this.#queue.then(async () => {
      const current = this.nodes.get(target.targetKey)
      if (request.expected === undefined || current?.kind === 'dir') return super.publishBytes(target, bytes, request)
      checkGuard('write', target.displayPath, request.expected, current && mapVersion(current.generation))
      await tick()
      return super.publishBytes(target, bytes, { ...request, expected: undefined })
    })
    this.#queue = run.catch(() => undefined)
    return run
  }
}

export default brokenConformance('declares atomic guards but checks them under an in-process lock', (limits) => new ProcessLockedGuards(limits))
