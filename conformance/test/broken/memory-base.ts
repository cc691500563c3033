import type { FsLimits } from '@seamfs/core'
import type { ConformanceOptions } from '@seamfs/conformance'
// The sources, not the package: the CLI resolves packages to their dist, which `tsc -b conformance` does not build.
import { memoryConformance } from '../../../packages/backend-memory/src/conformance.js'
import type { MemoryFileSystem } from '../../../packages/backend-memory/src/memory-file-system.js'
import { TUNING } from './base.js'

/** Conformance options for a broken variant of MemoryFileSystem: a store with symlinks and modes, which the Map example lacks. */
export function brokenMemoryConformance(name: string, create: (limits?: FsLimits) => MemoryFileSystem): ConformanceOptions<MemoryFileSystem> {
  return { ...memoryConformance(TUNING), name, create: ({ limits }) => ({ fs: create(limits) }) }
}
