import type { FsLimits } from '@seamfs/core'
import type { ConformanceOptions } from '@seamfs/conformance'
import mapConformance from '../../examples/map-conformance.js'
import type { MapFileSystem } from '../../examples/map-file-system.js'

/**
 * Conformance options for a variant of the Map example that tests the kit's runner rather
 * than a rule: one operation that hangs, spins, loops or crashes (or, for a correct
 * backend, completes on an unusual schedule). Small tuning keeps the tests that run quick.
 */
export function mapVariant(name: string, create: (limits?: FsLimits) => MapFileSystem): ConformanceOptions<MapFileSystem> {
  return {
    ...mapConformance,
    name,
    create: ({ limits }) => ({ fs: create(limits) }),
    options: { modelRuns: 10, largeFileBytes: 256 * 1024, atomicityBytes: 64 * 1024, atomicityWrites: 10 },
  }
}
