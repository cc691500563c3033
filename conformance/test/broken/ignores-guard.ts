import type { FsTarget, FsWriteOutcome, WriteOptions } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/** Broken: drops the replaceIfVersion guard (writes unconditionally). */
class IgnoresReplaceGuard extends MapFileSystem {
  override writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    const expected = opts.expected?.kind === 'replaceIfVersion' ? undefined : opts.expected
    return super.writeText(target, content, { ...opts, expected })
  }
}

export default brokenConformance('ignores replaceIfVersion', () => new IgnoresReplaceGuard())
