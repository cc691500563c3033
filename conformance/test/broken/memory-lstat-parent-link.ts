import { posix } from 'node:path'
import type { FsPathInfo } from '@seamfs/core'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): lstat reports `symlink` for any path with a link on the way, not only for a final link. */
class AnyLinkOnTheWay extends MemoryFileSystem {
  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsPathInfo | undefined> {
    const info = await super.lstatPath(path, cwd)
    if (info === undefined || info.type === 'symlink') return info
    const parts = posix
      .resolve(this.cwd, cwd ?? '.', path)
      .split('/')
      .filter((p) => p !== '')
    for (let i = 1; i < parts.length; i++) {
      try {
        if (this.volume.lstatSync(`/${parts.slice(0, i).join('/')}`).isSymbolicLink()) return { ...info, type: 'symlink' }
      } catch {
        return info
      }
    }
    return info
  }
}

export default brokenMemoryConformance('lstat reports links on the way', (limits) => new AnyLinkOnTheWay({ cwd: '/work', ...limits }))
