import type { ToolsConfig } from './types.js'

/** The shipped caps and defaults of every tool; a host overrides any of them through `createFileTools({ config })`. */
export const DEFAULT_CONFIG: ToolsConfig = Object.freeze({
  listMaxEntries: 200,
  readLimit: 2000,
  readMaxLineLength: 2000,
  readMaxBytes: 51200,
  readStreamMinSize: 10 * 1024 * 1024,
  readImageMaxBytes: 5 * 1024 * 1024,
  globMaxResults: 100,
  grepMaxMatches: 250,
  grepMaxLineBytes: 2000,
  searchTimeoutMs: 30_000,
  searchConcurrency: 8,
  callTimeoutMs: 30_000,
})

/** The most requests one glob or grep keeps in flight, whatever the config says. */
export const MAX_SEARCH_CONCURRENCY = 64

/** Defaults overlaid with `config`; every value must be a positive safe integer. */
export function resolveConfig(config: Partial<ToolsConfig> | undefined): ToolsConfig {
  const merged: Record<string, unknown> = { ...DEFAULT_CONFIG }
  for (const [key, value] of Object.entries(config ?? {})) {
    if (!(key in DEFAULT_CONFIG)) throw new TypeError(`tools: unknown config key "${key}"`)
    if (value !== undefined) merged[key] = value
  }
  for (const [key, value] of Object.entries(merged)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`tools: ${key} must be a positive integer`)
    }
  }
  if ((merged.searchConcurrency as number) > MAX_SEARCH_CONCURRENCY) {
    throw new RangeError(`tools: searchConcurrency must be at most ${MAX_SEARCH_CONCURRENCY}`)
  }
  return Object.freeze(merged) as unknown as ToolsConfig
}
