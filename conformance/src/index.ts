export { describeConformance } from './describe.js'
export { codeOf, Env, Kit, yieldToLoop, type Needs, type Tuning } from './kit.js'
export {
  DEFAULT_MODEL_SEED,
  DEFAULT_TIMEOUT_MS,
  type ConformanceOptions,
  type ConformanceSubject,
  type ConformanceTuning,
  type CrossProcessHook,
  type ExternalHooks,
} from './types.js'
export { externalByMount } from './mounts.js'
