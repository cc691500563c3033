import { FsError, FsTargetKey, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem, normalize } from '../../examples/map-file-system.js'
import { brokenConformance, parentKey } from './base.js'

/** Broken: a doubled separator inside a relative path is kept as an empty name: `d//f.txt` is another file than `d/f.txt`. */
class KeepsEmptyNames extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    if (path.startsWith('/') || !/[^/]\/\/+[^/]/.test(path)) return super.resolvePath(path, cwd)
    const base = normalize(cwd ?? '/', '/')
    const parts = base === '/' ? [] : base.slice(1).split('/')
    const names = path.split('/')
    names.forEach((part, i) => {
      if (part === '..') parts.pop()
      else if (part !== '.' && (part !== '' || (i > 0 && i < names.length - 1))) parts.push(part)
    })
    const key = `/${parts.join('/')}`
    for (let dir = parentKey(key); dir !== '/'; dir = parentKey(dir)) {
      if (this.nodes.get(dir)?.kind === 'file') throw FsError.throughFile('resolve', key)
    }
    return { targetKey: FsTargetKey(key), displayPath: key }
  }
}

export default brokenConformance('keeps doubled separators', (limits) => new KeepsEmptyNames(limits))
