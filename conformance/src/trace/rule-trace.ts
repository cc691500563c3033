/** The kit tests that check one rule line, and optionally what part of it they leave unchecked. */
export type RuleTrace = readonly string[] | { readonly tests: readonly string[]; readonly note: string }

/** Trace entries of some owners: owner (`FileSystem.readText`…) → rule text → its trace. */
export type OwnerTraces = Readonly<Record<string, Readonly<Record<string, RuleTrace>>>>

/** The model-based test, whatever seed and run count its title carries. */
export const MODEL = 'model-based › random command sequences agree with a plain model*'
