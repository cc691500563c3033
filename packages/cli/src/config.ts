/**
 * The harness config: which backend to mount (or which backends, under which
 * mount points) and with what options, plus the sandbox, the policy and the
 * tools' caps. Swapping local for S3 or SFTP is a change of `backend` and
 * nothing else. Each backend's keys and `--fs` form are checked by its own
 * package (see backends.ts); secrets never live here.
 */
import type { SandboxMode } from '@seamfs/core'
import { posix } from 'node:path'
import { ConfigError, Found, compareNames, configField, configObject, definedOnly, onlyKeys, redactUrl } from '@seamfs/core/backend'
import type { ToolsConfig } from '@seamfs/tools'
import { BACKENDS, backendDefinition, typeOfUrl, type BackendConfig } from './backends.js'
import { isUnknownKeyRefusal } from './config-error-text.js'

export { ConfigError, isConfigError } from '@seamfs/core/backend'
export type { BackendConfig } from './backends.js'

/**
 * The fence around the backend. Every key has a safe default, and the block itself may be left out:
 * `workspace-write` on the backend's root, reads confined to it. Paths are paths of the store,
 * relative to the backend's root.
 */
export interface SandboxConfig {
  /** Default `workspace-write`; `full-access` removes the fence (explicitly). */
  readonly mode?: SandboxMode | undefined
  /** The workspace inside the store (default `.`, the backend's root). */
  readonly workspaceRoot?: string | undefined
  readonly writableRoots?: readonly string[] | undefined
  /** Default true; `false` lets the model read anywhere the backend reaches. */
  readonly confineReads?: boolean | undefined
}

/** A mount's backend config, as for `backend`, plus `readOnly`: every mutation below the mount point is refused. */
export type MountConfig = BackendConfig & { readonly readOnly?: boolean | undefined }

/** Mount point (absolute, normalized; `/` required) → what is mounted there. */
export type MountsConfig = Readonly<Record<string, MountConfig>>

/**
 * Exactly one of `backend` and `mounts`. `backend`: a backend's config (`type` is a key of BACKENDS),
 * or `{ type: 'module', module }`, a module exporting a factory. `mounts`: several backends under
 * one tree, by mount point; the sandbox, `cwd` and the tools' paths are then paths of that tree.
 */
export type HarnessStores = { readonly backend: BackendConfig; readonly mounts?: undefined } | { readonly mounts: MountsConfig; readonly backend?: undefined }

export type HarnessConfig = HarnessStores & HarnessSettings

/** Everything of a harness config but its stores. */
export interface HarnessSettings {
  /** Base of the tools' relative paths, a path of the store (default: the backend's root). */
  readonly cwd?: string | undefined
  /** The fence; omitted, the safe defaults of {@link SandboxConfig}. */
  readonly sandbox?: SandboxConfig | undefined
  /** The read-before-write policy (default true). */
  readonly policy?: boolean | undefined
  readonly tools?: Partial<ToolsConfig> | undefined
  /**
   * What paths the model sees: `store` (default), the store's own (on local disk and SFTP, host
   * paths, with the user's name and home layout); `workspace`, the backend's root as `/` — every
   * path printed is still one the tools take, and nothing of the host's layout reaches the model
   * provider. With `backend`, `workspace` serves it as the one mount at `/` (with `mounts`, paths
   * are the tree's already).
   */
  readonly paths?: PathsView | undefined
  /**
   * An audit trail of every change the model's calls make, and of every one refused: one JSON line
   * each (`AuditLog` of `@seamfs/core`), in a file of this machine (relative to the config's
   * directory), which the model can never change. A path, or `{ path, maxBytes?, keep? }`.
   */
  readonly audit?: AuditConfig | undefined
  /**
   * OpenTelemetry spans and metrics of every tool call and every store call under it
   * (`TracedFileSystem` of `@seamfs/core/opentelemetry`), sent to the SDK the process registers
   * (`node --import ./otel-setup.js`); with none registered, nothing is recorded. Needs the package
   * `@opentelemetry/api` installed. Default `false`.
   */
  readonly tracing?: boolean | undefined
  /**
   * The model works on an overlay of the store (`OverlayFileSystem` of `@seamfs/tools`): every
   * change lands there, and nothing reaches the store until a person runs `seamfs commit` (after
   * `seamfs changes`), each change guarded by the version it was based on; `seamfs discard` drops
   * them. `true`, or `{ dir }`: the directory of this machine (relative to the config's directory,
   * default {@link OVERLAY_DIR}) where the changes are kept, across commands and restarts; the model
   * can never touch it.
   */
  readonly overlay?: OverlayConfig | undefined
}

/** Where an overlay's changes are kept by default, relative to the config's directory. */
export const OVERLAY_DIR = '.seamfs/overlay'

/** See {@link HarnessSettings.overlay}. */
export interface OverlayConfig {
  readonly dir: string
}

/** See {@link HarnessSettings.audit}. */
export interface AuditConfig {
  readonly path: string
  readonly maxBytes?: number | undefined
  readonly keep?: number | undefined
}

/** See {@link HarnessSettings.paths}. */
export type PathsView = 'store' | 'workspace'
export const PATHS_VIEWS: readonly PathsView[] = ['store', 'workspace']

type Obj = Readonly<Record<string, unknown>>

/** The config itself is named `(config)` when it is wrong as a whole; its own keys are named bare (`cwd`). */
const ROOT = '(config)'
const str = (value: Obj, where: string, name: string, required = false): string | undefined =>
  configField(value, where, { name, kind: 'string', required }) as string | undefined
const bool = (value: Obj, where: string, name: string): boolean | undefined => configField(value, where, { name, kind: 'boolean' }) as boolean | undefined

const quoted = (words: readonly string[]): string => words.map((w) => JSON.stringify(w)).join(', ')
const BACKEND_TYPES = `one of ${quoted([...Object.keys(BACKENDS), 'module'])}`
const SCHEMES = Object.values(BACKENDS).map((b) => b.scheme)
const URL_FORMS = `${SCHEMES.slice(0, -1).join(', ')} or ${SCHEMES.at(-1)}`

/**
 * A backend's config at `where` (`backend`, `mounts["/docs"]`): an object with a `type`, or a URL
 * string. `extraKeys` are the caller's own keys (a mount's `readOnly`), allowed and left out.
 */
async function backendConfig(raw: unknown, where: string, extraKeys: readonly string[] = []): Promise<BackendConfig> {
  if (typeof raw === 'string') return parseFsUrl(raw, where)
  const b = configObject(raw, where)
  const type = b['type']
  const own = Object.fromEntries(Object.entries(b).filter(([k]) => !extraKeys.includes(k)))
  if (type === 'module') {
    onlyKeys(b, where, ['type', 'module', ...extraKeys])
    return { type, module: str(b, where, 'module', true) }
  }
  if (typeof type !== 'string' || !Object.hasOwn(BACKENDS, type)) throw new ConfigError(`${where}.type`, BACKEND_TYPES, type)
  const definition = await backendDefinition(type, `${where}.type`)
  try {
    return definition.parseConfig(own, where)
  } catch (err) {
    // The package's unknown-key refusal lists its own keys: list the caller's too.
    const keys = ['type', ...definition.fields.map((f) => f.name)]
    if (extraKeys.length > 0 && isUnknownKeyRefusal(err, keys)) onlyKeys(b, where, [...keys, ...extraKeys])
    throw err
  }
}

/** How a mount point is named in a key: `mounts["/docs"]`. */
export const mountKey = (point: string): string => `mounts[${JSON.stringify(point)}]`

/** Mount points are absolute, normalized POSIX paths without NUL; `/` is required. */
function checkMountPoint(point: string): void {
  if (!point.startsWith('/')) throw new ConfigError('mounts', 'absolute mount points (like "/docs")', point)
  if (point.includes('\0') || !point.isWellFormed()) throw new ConfigError('mounts', 'mount points without NUL characters or lone surrogates', point)
  const normalized = posix.normalize(point).replace(/(.)\/+$/, '$1')
  if (normalized !== point) throw new ConfigError('mounts', `a normalized mount point (${JSON.stringify(normalized)})`, point)
}

/** The `mounts` table: each value a backend config (or URL) plus an optional `readOnly`. */
async function mountsConfig(raw: unknown): Promise<MountsConfig> {
  const table = configObject(raw, 'mounts')
  const points = Object.keys(table)
  for (const point of points) checkMountPoint(point)
  if (!points.includes('/')) {
    const found = points.length === 0 ? new Found('no mount point') : new Found(`only ${quoted([...points].sort(compareNames))}`)
    throw new ConfigError('mounts', 'a mount at "/" (the root of the tree)', found)
  }
  const mounts: Record<string, MountConfig> = {}
  for (const point of points) {
    const where = mountKey(point)
    const value = table[point]
    const backend = await backendConfig(value, where, ['readOnly'])
    const readOnly = typeof value === 'string' ? undefined : bool(value as Obj, where, 'readOnly')
    mounts[point] = readOnly === undefined ? backend : { ...backend, readOnly }
  }
  return mounts
}

const STORES = 'a backend (an object with a "type", or a URL string), or "mounts" (mount point → backend)'

/** Exactly one of `backend` and `mounts`. */
async function stores(c: Obj): Promise<HarnessStores> {
  if (c['backend'] !== undefined && c['mounts'] !== undefined) {
    throw new ConfigError(ROOT, '"backend" or "mounts", not both', new Found('both'))
  }
  if (c['mounts'] !== undefined) return { mounts: await mountsConfig(c['mounts']) }
  if (c['backend'] === undefined) throw new ConfigError('backend', STORES, undefined)
  return { backend: await backendConfig(c['backend'], 'backend') }
}

const SANDBOX_MODES: readonly string[] = ['read-only', 'workspace-write', 'full-access']
const TOOL_KEYS: readonly string[] = [
  'listMaxEntries',
  'readLimit',
  'readMaxLineLength',
  'readMaxBytes',
  'readImageMaxBytes',
  'readStreamMinSize',
  'globMaxResults',
  'grepMaxMatches',
  'grepMaxLineBytes',
  'searchTimeoutMs',
  'searchConcurrency',
]

/**
 * Checks a parsed config (JSON or a module's export) and returns it typed, or
 * rejects with {@link ConfigError}. Asynchronous: a backend's keys are checked
 * by its package, imported when the config names it.
 */
export async function validateConfig(raw: unknown): Promise<HarnessConfig> {
  const c = configObject(raw, ROOT)
  onlyKeys(c, '', ['$schema', 'backend', 'mounts', 'cwd', 'sandbox', 'policy', 'tools', 'paths', 'audit', 'tracing', 'overlay'])
  let audit: AuditConfig | undefined
  if (typeof c['audit'] === 'string' && c['audit'] !== '') audit = { path: c['audit'] }
  else if (c['audit'] !== undefined) {
    const a = configObject(c['audit'], 'audit')
    onlyKeys(a, 'audit', ['path', 'maxBytes', 'keep'])
    const path = str(a, 'audit', 'path', true) as string
    for (const [k, min] of [
      ['maxBytes', 4096],
      ['keep', 0],
    ] as const) {
      const v = a[k]
      if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min))
        throw new ConfigError(`audit.${k}`, `an integer of at least ${min}`, v)
    }
    audit = definedOnly({ path, maxBytes: a['maxBytes'] as number | undefined, keep: a['keep'] as number | undefined })
  }
  let overlay: OverlayConfig | undefined
  if (c['overlay'] === true) overlay = { dir: OVERLAY_DIR }
  else if (c['overlay'] !== undefined && c['overlay'] !== false) {
    if (typeof c['overlay'] !== 'object' || c['overlay'] === null || Array.isArray(c['overlay']))
      throw new ConfigError('overlay', 'true, false or { dir }', c['overlay'])
    const o = configObject(c['overlay'], 'overlay')
    onlyKeys(o, 'overlay', ['dir'])
    overlay = { dir: str(o, 'overlay', 'dir') ?? OVERLAY_DIR }
  }
  const paths = c['paths']
  if (paths !== undefined && (typeof paths !== 'string' || !(PATHS_VIEWS as readonly string[]).includes(paths))) {
    throw new ConfigError('paths', `one of ${quoted(PATHS_VIEWS)}`, paths)
  }
  const backends = await stores(c)
  let sandbox: SandboxConfig | undefined
  if (c['sandbox'] !== undefined) {
    const s = configObject(c['sandbox'], 'sandbox')
    onlyKeys(s, 'sandbox', ['mode', 'workspaceRoot', 'writableRoots', 'confineReads'])
    if (s['mode'] !== undefined && (typeof s['mode'] !== 'string' || !SANDBOX_MODES.includes(s['mode']))) {
      throw new ConfigError('sandbox.mode', `one of ${quoted(SANDBOX_MODES)}`, s['mode'])
    }
    const roots = s['writableRoots']
    if (roots !== undefined && (!Array.isArray(roots) || !roots.every((r) => typeof r === 'string' && r !== ''))) {
      throw new ConfigError('sandbox.writableRoots', 'an array of non-empty strings', roots)
    }
    sandbox = definedOnly({
      mode: s['mode'] as SandboxMode | undefined,
      workspaceRoot: str(s, 'sandbox', 'workspaceRoot'),
      writableRoots: roots as string[] | undefined,
      confineReads: bool(s, 'sandbox', 'confineReads'),
    })
  }
  const policy = bool(c, '', 'policy')
  let tools: Partial<ToolsConfig> | undefined
  if (c['tools'] !== undefined) {
    const t = configObject(c['tools'], 'tools')
    onlyKeys(t, 'tools', TOOL_KEYS)
    for (const [k, v] of Object.entries(t)) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new ConfigError(`tools.${k}`, 'a positive integer', v)
    }
    tools = t
  }
  return {
    ...backends,
    ...definedOnly({ cwd: str(c, '', 'cwd'), sandbox, policy, tools, paths: paths as PathsView | undefined, audit, tracing: bool(c, '', 'tracing'), overlay }),
  }
}

/** A config or backend written as code (`.js`, `.mjs`, `.cjs`, `.ts`, `.mts`, `.cts`): imported, not parsed. */
export const MODULE_FILE = /\.[cm]?[jt]s$/

/**
 * The short forms of `--fs`: each backend's URL form (`file:./work`,
 * `memory:`, `s3://bucket/prefix?…`, `sftp://user@host:port/path?key=…`, read
 * by its package), a module (`.js`, `.mjs`, `.ts`), or a plain directory path
 * (the local backend). A bare `memory` is the memory backend, not a directory.
 * `key` names the option in messages (`backend` when the URL is the config's
 * backend).
 */
export async function parseFsUrl(spec: string, key = '--fs'): Promise<BackendConfig> {
  const url = spec === 'memory' ? 'memory:' : spec
  const type = typeOfUrl(url)
  if (type !== undefined) return (await backendDefinition(type, key)).fromUrl(url, key)
  if (url === '' || (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^[a-z]:[\\/]/i.test(url))) {
    throw new ConfigError(key, URL_FORMS, redactUrl(url))
  }
  if (MODULE_FILE.test(url)) return { type: 'module', module: url }
  return (await backendDefinition('local', key)).fromUrl(`file:${url}`, key)
}
