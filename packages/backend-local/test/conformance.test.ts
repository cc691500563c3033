import { describeConformance } from '@seamfs/conformance'
import { localConformance } from '@seamfs/backend-local/conformance'

await describeConformance(localConformance({ modelRuns: 100 }))
