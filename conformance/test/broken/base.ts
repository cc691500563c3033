import type { ConformanceOptions } from '@seamfs/conformance'
import mapConformance from '../../examples/map-conformance.js'
import type { MapFileSystem } from '../../examples/map-file-system.js'

/** Conformance options for a deliberately broken variant of the Map example backend. */
export function brokenConformance(name: string, create: () => MapFileSystem): ConformanceOptions<MapFileSystem> {
  return {
    ...mapConformance,
    name,
    create: () => ({ fs: create() }),
    options: { modelRuns: 50, largeFileBytes: 2 * 1024 * 1024, atomicityBytes: 256 * 1024, atomicityWrites: 40 },
  }
}
