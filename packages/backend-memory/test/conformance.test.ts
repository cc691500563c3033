import { describeConformance } from '@seamfs/conformance'
import { memoryConformance } from '@seamfs/backend-memory/conformance'

// This backend is cheap: many model-based runs.
await describeConformance(memoryConformance({ modelRuns: 600 }))
