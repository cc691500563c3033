import type { FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: reading drops a final lone CR (a "tidy" line-ending fix-up): the bytes read are not the bytes stored. */
class DropsFinalCr extends MapFileSystem {
  static #tidy(bytes: Uint8Array): Uint8Array {
    return bytes.length > 0 && bytes[bytes.length - 1] === 0x0d && bytes[bytes.length - 2] !== 0x0d ? bytes.slice(0, -1) : bytes
  }

  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    return DropsFinalCr.#tidy(await super.loadBytes(target))
  }

  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    return [DropsFinalCr.#tidy(Uint8Array.from([...(await super.openBytes(target))].flatMap((c) => [...c])))]
  }
}

export default brokenConformance('drops a final CR when reading', (limits) => new DropsFinalCr(limits))
