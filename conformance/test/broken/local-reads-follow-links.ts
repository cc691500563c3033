import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConformanceOptions } from '@seamfs/conformance'
import type { FsTarget } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { localConformance } from '@seamfs/backend-local/conformance'
import { TUNING } from './base.js'

/** The local disk declaring key-bound reads, whose `readText` reads by path string: through any link swapped in since `resolve`. */
class PathReadingLocal extends LocalFileSystem {
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    return readFileSync(target.targetKey)
  }
}

/** The local backend's own kit options, on that store (one process: the claim is about links, not writers). */
const options: ConformanceOptions<PathReadingLocal> = {
  ...localConformance(),
  name: 'declares key-bound reads but reads by path',
  create: ({ limits }) => {
    const root = mkdtempSync(join(tmpdir(), 'seamfs-conformance-'))
    return { fs: new PathReadingLocal({ ...limits, cwd: root }), dispose: () => rmSync(root, { recursive: true, force: true }) }
  },
  crossProcess: undefined,
  options: TUNING,
}

export default options
