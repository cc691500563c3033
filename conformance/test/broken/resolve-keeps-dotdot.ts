import { FsTargetKey, type FsTarget } from '@seamfs/core/backend'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: a string join that folds `.` but keeps `..`, so `d/x/../a` and `d/a` are two keys for one file. */
class KeepsDotDot extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    // The base still checks the path-through-a-file rule; only the key is built wrongly.
    const checked = await super.resolvePath(path, cwd)
    if (!path.split('/').includes('..')) return checked
    const base = path.startsWith('/') ? '' : (await super.resolvePath(cwd ?? '/', undefined)).targetKey
    const key = `/${`${base}/${path}`
      .split('/')
      .filter((part) => part !== '' && part !== '.')
      .join('/')}`
    return { targetKey: FsTargetKey(key), displayPath: key }
  }
}

export default brokenConformance('keeps .. in keys', (limits) => new KeepsDotDot(limits))
