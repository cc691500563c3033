/**
 * Decisions on a `ConfigError`, from its fields (`key`, `expected`, `found`), never its message.
 */
import { ConfigError, isConfigError } from '@seamfs/core/backend'

/** True when `err` is the refusal `onlyKeys` builds for an unknown key of an object whose keys are `keys`. */
export function isUnknownKeyRefusal(err: unknown, keys: readonly string[]): boolean {
  return isConfigError(err) && err.found === 'an unknown key' && err.expected === `one of the keys ${keys.join(', ')}`
}

/** `err` with its key replaced by `key`: the same `expected …, found …`. */
export function withConfigKey(err: ConfigError, key: string): ConfigError {
  return ConfigError.at(key, err)
}
