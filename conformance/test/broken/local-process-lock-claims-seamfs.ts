import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConformanceOptions } from '@seamfs/conformance'
import { localConformance } from '@seamfs/backend-local/conformance'
import { TUNING } from './base.js'
import { ProcessLockedLocal } from './local-process-lock-claims-seamfs.mjs'

/** The local backend's own kit options, on a store whose guards are process-wide but declared `seamfs`. */
const options: ConformanceOptions<ProcessLockedLocal> = {
  ...localConformance(),
  name: 'declares seamfs guards but holds them in each process',
  create: ({ limits }) => {
    const root = mkdtempSync(join(tmpdir(), 'seamfs-conformance-'))
    return { fs: new ProcessLockedLocal({ ...limits, cwd: root }), dispose: () => rmSync(root, { recursive: true, force: true }) }
  },
  crossProcess: { module: new URL('./local-process-lock-claims-seamfs.mjs', import.meta.url).href, descriptor: (subject) => ({ root: subject.fs.cwd }) },
  options: TUNING,
}

export default options
