import { describeConformance } from '@seamfs/conformance'
import mapConformance from './map-conformance.js'

await describeConformance(mapConformance)
