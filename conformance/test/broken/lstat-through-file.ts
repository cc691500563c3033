import { FsError, isFsError, type FsInfo } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: lstat of a path through a file reports ENOTDIR as FS_NOT_DIRECTORY instead of absent. */
class LstatThroughFileFails extends MapFileSystem {
  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsInfo | undefined> {
    try {
      return await super.lstatPath(path, cwd)
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND')) throw FsError.notDirectory('lstat', path, err)
      throw err
    }
  }
}

export default brokenConformance('fails lstat through a file', (limits) => new LstatThroughFileFails(limits))
