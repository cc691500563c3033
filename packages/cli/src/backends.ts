/**
 * The backends the CLI can mount: type → the package whose `./config` entry
 * defines it (an optional peer dependency, imported only when configured) and
 * the scheme of its `--fs` form. Adding a backend is one line here; its
 * config keys, URL form, opening and description live in its package.
 */
import { ConfigError, Found, type BackendConfigBase, type BackendDefinition } from '@seamfs/core/backend'

interface BackendEntry {
  readonly package: string
  /** The name of the definition among the `./config` entry's exports. */
  readonly export: string
  /** How its `--fs` form starts. */
  readonly scheme: string
}

export const BACKENDS: Readonly<Record<string, BackendEntry>> = {
  local: { package: '@seamfs/backend-local', export: 'localBackend', scheme: 'file:' },
  memory: { package: '@seamfs/backend-memory', export: 'memoryBackend', scheme: 'memory:' },
  s3: { package: '@seamfs/backend-s3', export: 's3Backend', scheme: 's3://' },
  sftp: { package: '@seamfs/backend-ssh', export: 'sftpBackend', scheme: 'sftp://' },
}

/** A backend's config as the CLI holds it: checked by its package, opaque here. */
export type BackendConfig = BackendConfigBase & { readonly [key: string]: unknown }

export type AnyBackendDefinition = BackendDefinition<BackendConfig>

/** The type of the backend whose `--fs` form `spec` is, if any. */
export const typeOfUrl = (spec: string): string | undefined => Object.entries(BACKENDS).find(([, entry]) => spec.startsWith(entry.scheme))?.[0]

/**
 * Whether `err` is the failure to find `pkg` itself, not a module it imports
 * in turn. Node names the package (`'pkg'`), vitest the specifier (`'pkg/sub'`).
 * Node's `ERR_MODULE_NOT_FOUND` says which specifier it could not find in its
 * message only (no field holds it), so this is the one place the CLI reads an
 * import error's message.
 */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return false
  const message = (err as Error).message
  return message.includes(`'${pkg}'`) || message.includes(`'${pkg}/`)
}

/**
 * Imports `pkg/config` and returns its export `name`. A package that is not
 * installed is a ConfigError on `key` that says what to install.
 */
export async function importDefinition(pkg: string, name: string, key: string): Promise<AnyBackendDefinition> {
  let mod: Record<string, unknown>
  try {
    mod = (await import(`${pkg}/config`)) as Record<string, unknown>
  } catch (err) {
    if (isMissingPackage(err, pkg)) throw new ConfigError(key, `the package ${pkg} (npm install ${pkg})`, new Found('it is not installed'))
    throw new ConfigError(key, `a package ${pkg} that can be imported`, (err as Error).message)
  }
  const definition = mod[name] as Partial<AnyBackendDefinition> | undefined
  if (typeof definition?.parseConfig !== 'function' || typeof definition.open !== 'function') {
    throw new ConfigError(key, `a package ${pkg} whose ./config exports ${name}`, new Found('none'))
  }
  return definition as AnyBackendDefinition
}

/** The definition of backend `type` (one of {@link BACKENDS}); `key` names where the type came from. */
export async function backendDefinition(type: string, key: string): Promise<AnyBackendDefinition> {
  const entry = Object.hasOwn(BACKENDS, type) ? BACKENDS[type] : undefined
  if (entry === undefined) throw new Error(`no backend ${type}`)
  return importDefinition(entry.package, entry.export, key)
}
