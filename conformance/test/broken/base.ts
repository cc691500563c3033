import type { FsLimits } from '@seamfs/core'
import type { ConformanceOptions } from '@seamfs/conformance'
import mapConformance from '../../examples/map-conformance.js'
import type { MapFileSystem } from '../../examples/map-file-system.js'

/** Conformance options for a deliberately broken variant of the Map example backend. */
export function brokenConformance(name: string, create: (limits?: FsLimits) => MapFileSystem): ConformanceOptions<MapFileSystem> {
  return {
    ...mapConformance,
    name,
    create: ({ limits }) => ({ fs: create(limits) }),
    options: { modelRuns: 50, largeFileBytes: 2 * 1024 * 1024, atomicityBytes: 256 * 1024, atomicityWrites: 40 },
  }
}
