import type { FsDirEntry, FsInfo, FsTarget, WriteRequest, WriteResult } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: after close(), requests wait for a connection that never comes back: every call hangs. */
class WaitsForever extends MapFileSystem {
  #closed = false

  override async close(): Promise<void> {
    this.#closed = true
  }

  async #connection(): Promise<void> {
    if (this.#closed) await new Promise<never>(() => undefined)
  }

  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    await this.#connection()
    return super.statTarget(target)
  }

  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    await this.#connection()
    return super.loadBytes(target)
  }

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    await this.#connection()
    return super.listEntries(target)
  }

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    await this.#connection()
    return super.publishBytes(target, bytes, request)
  }
}

export default brokenConformance('hangs after close()', (limits) => new WaitsForever(limits))
