import type { FsInfo, FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (claims `mtime`): stat gives the time a path was first seen, from a cache: a later change never moves it. */
class FrozenMtime extends MemoryFileSystem {
  readonly #first = new Map<string, number>()

  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    if (info?.mtime === undefined) return info
    const first = this.#first.get(target.targetKey) ?? info.mtime
    this.#first.set(target.targetKey, first)
    return { ...info, mtime: first }
  }
}

export default brokenMemoryConformance('claims mtime and never moves it', (limits) => new FrozenMtime({ cwd: '/work', ...limits }))
