/**
 * How a backend package describes its own configuration, so that a harness
 * (the seamfs CLI) can mount it from JSON or from a `--fs` URL without knowing
 * anything about it. Each backend package exports one {@link BackendDefinition}
 * from its `./config` entry; the harness keeps only a map of backend type to
 * package. Secrets never live in a config: they are read from the environment
 * (or a key file) when the backend is opened.
 */
import { homedir } from 'node:os'
import { resolve } from 'node:path'
import type { FileSystem } from './file-system.js'

/** The environment a backend reads its secrets from (a harness passes `process.env`). */
export type ConfigEnv = Readonly<Record<string, string | undefined>>

/** What every backend config has: the `type` that picks the backend. */
export interface BackendConfigBase {
  readonly type: string
}

/**
 * One key of a backend's JSON config.
 * - `string`: a non-empty string (`allowEmpty`: any string);
 * - `boolean`: `true` or `false`;
 * - `port`: an integer from 1 to 65535;
 * - `object`: a JSON object;
 * - `mode`: permission bits as an octal string (`"0600"`, `"0o644"`, `"600"`), up to `0777`; parsed to a number.
 *   A JSON number is refused: `600` would silently mean `0o1130`.
 */
export interface ConfigField {
  readonly name: string
  readonly kind: 'string' | 'boolean' | 'port' | 'object' | 'mode'
  readonly required?: boolean
  readonly allowEmpty?: boolean
  /** One line for people: what it means, its default. */
  readonly doc: string
}

/**
 * A backend's configuration, owned by its package (`<package>/config`).
 * Errors are {@link ConfigError}s that name the key, what was expected and
 * what was found, and never contain a secret.
 */
export interface BackendDefinition<C extends BackendConfigBase> {
  /** The config's `type`. */
  readonly type: C['type']
  /** The `--fs` URL form, as shown to people (`s3://<bucket>/<prefix>?…`). */
  readonly url: string
  /** The keys of the JSON config besides `type`, in the order they are checked and listed. */
  readonly fields: readonly ConfigField[]
  /** Checks a JSON config object; `where` names it in errors (`backend` → `backend.root`). */
  parseConfig(raw: unknown, where: string): C
  /** Reads the `--fs` URL form; `where` names the option in errors (`--fs`). */
  fromUrl(spec: string, where: string): C
  /**
   * Opens the filesystem. Secrets come from `env` (or files the config names);
   * relative paths of the config start at `baseDir`. A problem with the config
   * found only now is a {@link ConfigError} on the key under `backend`, where a
   * harness config holds it.
   */
  open(config: C, env: ConfigEnv, baseDir: string): Promise<FileSystem>
  /**
   * What is mounted, for people: never a password, a secret key or key contents. Relative paths of
   * this machine are shown resolved from `baseDir` when it is given.
   */
  describe(config: C, baseDir?: string): string
}

/** What was found, when it is told in words rather than shown as a value (an unknown key, a secret). */
export class Found {
  constructor(readonly text: string) {}
}

function shown(value: unknown): string {
  if (value instanceof Found) return value.text
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `the ${typeof value} ${value}`
  return `a ${typeof value}`
}

/** A config that cannot be used: which key, what was expected, what was found. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  /** Where in the config: `backend.bucket`, `mounts["/docs"]`. */
  readonly key: string
  /** What the key must hold: `a string`, `one of the keys type, root`. */
  readonly expected: string
  /** What it held, as shown: `the number 3`, `an unknown key`. */
  readonly found: string

  constructor(key: string, expected: string, found: unknown) {
    const shownFound = shown(found)
    super(`config: ${key}: expected ${expected}, found ${shownFound}`)
    this.key = key
    this.expected = expected
    this.found = shownFound
  }

  /** The same refusal about another key (a package's own key moved under the caller's). */
  static at(key: string, err: Pick<ConfigError, 'expected' | 'found'>): ConfigError {
    return new ConfigError(key, err.expected, new Found(err.found))
  }
}

/** By name and shape, not `instanceof`: a backend may bring its own copy of core. */
export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof Error && err.name === 'ConfigError' && typeof (err as { key?: unknown }).key === 'string'
}

/** The key `name` inside `where`; `''` is the config itself, whose keys are named bare. */
export const configKey = (where: string, name: string): string => (where === '' ? name : `${where}.${name}`)

/** `value` as a JSON object, or a ConfigError on `key`. */
export function configObject(value: unknown, key: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(key, 'an object', value)
  return value as Record<string, unknown>
}

/** Refuses any key of `value` not in `allowed`. */
export function onlyKeys(value: Readonly<Record<string, unknown>>, where: string, allowed: readonly string[]): void {
  for (const k of Object.keys(value)) {
    if (!allowed.includes(k)) throw new ConfigError(configKey(where, k), `one of the keys ${allowed.join(', ')}`, new Found('an unknown key'))
  }
}

/** Checks one key of `value` as `field` says; undefined when absent and optional. */
export function configField(value: Readonly<Record<string, unknown>>, where: string, field: Omit<ConfigField, 'doc'>): unknown {
  const v = value[field.name]
  const key = configKey(where, field.name)
  if (v === undefined && field.required !== true) return undefined
  switch (field.kind) {
    case 'string':
      if (typeof v === 'string' && (field.allowEmpty === true || v.trim() !== '')) return v
      throw new ConfigError(key, 'a non-empty string', v)
    case 'boolean':
      if (typeof v === 'boolean') return v
      throw new ConfigError(key, 'true or false', v)
    case 'port':
      if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535) return v
      throw new ConfigError(key, 'a port number (1-65535)', v)
    case 'object':
      return configObject(v, key)
    case 'mode': {
      const digits = typeof v === 'string' ? /^(?:0o|0)?([0-7]{1,3})$/i.exec(v.trim())?.[1] : undefined
      if (digits !== undefined) return Number.parseInt(digits, 8)
      throw new ConfigError(key, 'permission bits as an octal string, e.g. "0600"', v)
    }
  }
}

/** Drops undefined fields, so optional keys stay absent under exactOptionalPropertyTypes. */
export function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/**
 * The common part of `parseConfig`: an object holding only `type` and the
 * `fields`, each checked in order. Returns `{ type, ...fields }` without the
 * absent ones; the caller casts it to its config type.
 */
export function parseConfigFields(raw: unknown, where: string, type: string, fields: readonly ConfigField[]): BackendConfigBase {
  const value = configObject(raw, where)
  onlyKeys(value, where, ['type', ...fields.map((f) => f.name)])
  return definedOnly({ type, ...Object.fromEntries(fields.map((f) => [f.name, configField(value, where, f)])) })
}

/**
 * `user:password@` at the start of a URL. The password runs from the first `:` before the first `@`
 * to the LAST `@`: a `/ ? # @ :` typed in it unencoded (AWS secret keys have `/`) must not end it early.
 */
const USERINFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^@:]*):.*@/is
/** The same, for printing: also a mistyped `scheme:/user:pw@` or `scheme:user:pw@` is redacted. */
const ANY_USERINFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/*[^/@:]*):.*@/is

/**
 * A URL as it may be printed back: any password replaced by `***`, and so is
 * every query value and the fragment (a secret may be passed as `?token=…`, or
 * hold a `#`). Query keys and everything before the query stay.
 */
export function redactUrl(spec: string): string {
  const s = spec.replace(ANY_USERINFO_PASSWORD, '$1:***@')
  const query = s.search(/[?#]/)
  if (query === -1) return s
  const tail = s.slice(query).replace(/#.*$/s, '#***')
  return s.slice(0, query) + tail.replace(/([?&][^=&#]*=)[^&#]*/g, '$1***')
}

/** A query key as it is named in a message: quoted, and cut short (a secret pasted as a key would be long). */
const queryKeyShown = (key: string): string => JSON.stringify(key.length > 40 ? `${key.slice(0, 37)}...` : key)

/**
 * Parses a `scheme://…` form of `--fs`. Refused, without ever echoing a
 * secret: a password in it (it would be printed back and kept in shell
 * history), even one whose `/ ? # @` makes the URL parse otherwise; a fragment;
 * and, when `queryKeys` is given, a query key not in it or given twice (the
 * message names the key and the allowed ones, never a value). A `+` in the
 * query is a plus, not a space (`?hostKeySha256=SHA256:a+b/c` means what it
 * says); `%2B`, `%2F`, `%3D`… are decoded as usual.
 */
export function parseConfigUrl(spec: string, where: string, queryKeys?: readonly string[]): URL {
  let url: URL
  try {
    url = new URL(spec)
  } catch {
    throw new ConfigError(where, 'a valid URL', redactUrl(spec))
  }
  if (url.password !== '' || USERINFO_PASSWORD.test(spec)) {
    throw new ConfigError(where, 'no password in the URL (use an environment variable)', new Found('a password'))
  }
  if (url.hash !== '' || spec.includes('#')) throw new ConfigError(where, 'no "#" in the URL (write it as %23)', new Found('a fragment'))
  url.search = url.search.replaceAll('+', '%2B')
  if (queryKeys !== undefined) {
    const seen = new Set<string>()
    for (const key of url.searchParams.keys()) {
      if (!queryKeys.includes(key)) {
        const allowed = queryKeys.length === 0 ? 'no query' : `only the query keys ${queryKeys.join(', ')}`
        throw new ConfigError(where, allowed, new Found(`the unknown query key ${queryKeyShown(key)}`))
      }
      if (seen.has(key)) throw new ConfigError(where, 'each query key at most once', new Found(`the query key ${queryKeyShown(key)} twice`))
      seen.add(key)
    }
  }
  return url
}

/** A path of a config (a directory, a key file) on this machine: `~` is the home directory, relative starts at `baseDir`. */
export function configPath(path: string, baseDir: string): string {
  return resolve(baseDir, path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path)
}
