import { FsError, FsTargetKey, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem, normalize } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: `..` is folded, and so is a leading `.`, but a `.` inside a path is kept as a name: `d/./f.txt` is another file than `d/f.txt`. */
class KeepsDot extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const inner = /[^/.]\/\.(\/|$)/.test(path)
    if (!inner) return super.resolvePath(path, cwd)
    const parts: string[] = []
    for (const part of `${path.startsWith('/') ? '' : normalize(cwd ?? '/', '/')}/${path}`.split('/')) {
      if (part === '') continue
      if (part === '..') parts.pop()
      else if (part !== '.' || parts.length > 0) parts.push(part)
    }
    const key = `/${parts.join('/')}`
    for (let dir = parentKey(key); dir !== '/'; dir = parentKey(dir)) {
      if (this.nodes.get(dir)?.kind === 'file') throw FsError.throughFile('resolve', key)
    }
    return { targetKey: FsTargetKey(key), displayPath: key }
  }
}

export default brokenConformance('keeps . segments', (limits) => new KeepsDot(limits))
