import { MemoryFileSystem, type MemoryFileSystemOptions } from '@seamfs/backend-memory'
import type { ByteChunks, FsTarget, OpenedFile, ReadRequest } from '@seamfs/core/backend'

/**
 * A memory store that can stop answering, as a frozen server does: while {@link freeze}d its hooks
 * (and each chunk of a stream) wait; once {@link thaw}ed they answer as memory does. For tests of
 * deadlines and aborts in every package.
 */
export class FrozenMemory extends MemoryFileSystem {
  hanging = false
  /** A late stream's `return()` calls, to prove it was released. */
  released = 0
  #gate: Promise<void> = Promise.resolve()
  #open: () => void = () => undefined

  freeze(): void {
    this.hanging = true
    this.#gate = new Promise<void>((resolve) => (this.#open = resolve))
  }

  thaw(): void {
    this.hanging = false
    this.#open()
  }

  async #wait(): Promise<void> {
    if (this.hanging) await this.#gate
  }

  protected override async statTarget(...args: Parameters<MemoryFileSystem['statTarget']>): Promise<Awaited<ReturnType<MemoryFileSystem['statTarget']>>> {
    await this.#wait()
    return super.statTarget(...args)
  }
  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    await this.#wait()
    return super.loadBytes(target, request)
  }
  // Memory declares its chunks a plain iterable; core takes any `ByteChunks`, and a remote store's are async.
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    await this.#wait()
    const inner = await super.openBytes(target)
    const chunks = inner[Symbol.iterator]()
    // Each chunk waits while frozen, as a remote read request does; `return()` counts the release.
    const source: AsyncIterableIterator<Uint8Array> = {
      next: async () => {
        await this.#wait()
        return chunks.next()
      },
      return: async () => {
        this.released++
        return { done: true, value: undefined }
      },
      [Symbol.asyncIterator]: () => source,
    }
    return source as ByteChunks as Iterable<Uint8Array>
  }
  // One look, frozen like the others: the info once the store answers, the chunks as `openBytes` gives them.
  protected override async openTarget(target: FsTarget): Promise<OpenedFile> {
    await this.#wait()
    const { info } = await super.openTarget(target)
    return { info, chunks: await this.openBytes(target) }
  }
  protected override async listEntries(...args: Parameters<MemoryFileSystem['listEntries']>): Promise<Awaited<ReturnType<MemoryFileSystem['listEntries']>>> {
    await this.#wait()
    return super.listEntries(...args)
  }
  protected override async publishBytes(...args: Parameters<MemoryFileSystem['publishBytes']>): Promise<Awaited<ReturnType<MemoryFileSystem['publishBytes']>>> {
    await this.#wait()
    return super.publishBytes(...args)
  }
  protected override async updateBytes(...args: Parameters<MemoryFileSystem['updateBytes']>): Promise<Awaited<ReturnType<MemoryFileSystem['updateBytes']>>> {
    await this.#wait()
    return super.updateBytes(...args)
  }
  protected override async removeTarget(...args: Parameters<MemoryFileSystem['removeTarget']>): Promise<Awaited<ReturnType<MemoryFileSystem['removeTarget']>>> {
    await this.#wait()
    return super.removeTarget(...args)
  }
  protected override async makeDirectory(...args: Parameters<MemoryFileSystem['makeDirectory']>): Promise<boolean> {
    await this.#wait()
    return super.makeDirectory(...args)
  }
}

/** Frozen stores for one test file: `make()` one, and `cleanup` (for `afterEach`) thaws and closes them all. */
export function frozenStores(): { make: (options?: MemoryFileSystemOptions) => FrozenMemory; cleanup: () => Promise<void> } {
  const made: FrozenMemory[] = []
  return {
    make: (options = { files: { 'notes.txt': 'alpha\n' }, cwd: '/w' }) => {
      const fs = new FrozenMemory(options)
      made.push(fs)
      return fs
    },
    cleanup: async () => {
      for (const fs of made.splice(0)) {
        fs.thaw()
        await fs.close()
      }
    },
  }
}
