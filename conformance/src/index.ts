export { describeConformance } from './describe.js'
export { codeOf, Env, Kit, type Needs, type Tuning } from './kit.js'
export { DEFAULT_MODEL_SEED, type ConformanceOptions, type ConformanceSubject, type ConformanceTuning, type ExternalHooks } from './types.js'
