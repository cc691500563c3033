import type { ConformanceOptions } from '@seamfs/conformance'
import type { MapFileSystem } from '../../examples/map-file-system.js'
import mapConformance from '../../examples/map-conformance.js'

/** Hostile: the factory never delivers (a store that never answers the connect): the kit hangs before any test. */
const createNeverSettles: ConformanceOptions<MapFileSystem> = {
  ...mapConformance,
  name: 'create() never settles',
  create: () => new Promise(() => undefined),
}

export default createNeverSettles
