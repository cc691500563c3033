import type { FsInfo } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: lstat gives a file's size in UTF-16 code units of its text (stat and the listing give bytes). */
class LstatChars extends MapFileSystem {
  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsInfo | undefined> {
    const info = await super.lstatPath(path, cwd)
    const node = this.nodes.get((await this.resolvePath(path, cwd)).targetKey)
    return info?.type === 'file' && node?.kind === 'file' ? { ...info, size: new TextDecoder().decode(node.bytes).length } : info
  }
}

export default brokenConformance('lstat size in characters', (limits) => new LstatChars(limits))
