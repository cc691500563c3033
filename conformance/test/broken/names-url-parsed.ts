import type { FsTarget } from '@seamfs/core/backend'
import { MapFileSystem, normalize } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: paths are joined with the URL parser: a `#` or `?` starts a fragment or a query, and the name ends there. */
class UrlJoined extends MapFileSystem {
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    if (!/[#?]/.test(path)) return super.resolvePath(path, cwd)
    const base = normalize(cwd ?? '/', '/')
    const url = new URL(path.replaceAll('%', '%25'), `map://store${base === '/' ? '/' : `${base}/`}`)
    return super.resolvePath(decodeURIComponent(url.pathname), undefined)
  }
}

export default brokenConformance('ends names at # and ?', (limits) => new UrlJoined(limits))
