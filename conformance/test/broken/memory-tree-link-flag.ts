import type { FsTarget, FsTreeEntry } from '@seamfs/core'
import type { TreePages, TreeRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { brokenMemoryConformance } from './memory-base.js'

/** Broken (a store with symlinks): `listTree` does not say which directories are links, so a caller cannot tell what it did not enter. */
class DropsLinkFlag extends MemoryFileSystem {
  protected override async listSubtree(target: FsTarget, request: TreeRequest): Promise<TreePages> {
    const pages = await super.listSubtree(target, request)
    return (async function* (): AsyncGenerator<FsTreeEntry[]> {
      for await (const page of pages) yield page.map(({ link: _, ...entry }) => entry)
    })()
  }
}

export default brokenMemoryConformance('listTree drops the link flag', (limits) => new DropsLinkFlag({ cwd: '/work', ...limits }))
