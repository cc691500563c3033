/**
 * The harness config: which backend to mount and with what options, plus the
 * sandbox, the policy and the tools' caps. Swapping local for S3 or SFTP is a
 * change of `backend` and nothing else. Each backend's keys and `--fs` form
 * are checked by its own package (see backends.ts); secrets never live here.
 */
import type { SandboxMode } from '@seamfs/core'
import { ConfigError, configField, configObject, definedOnly, onlyKeys, redactUrl } from '@seamfs/core/backend'
import type { ToolsConfig } from '@seamfs/tools'
import { BACKENDS, backendDefinition, typeOfUrl, type BackendConfig } from './backends.js'

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

export interface HarnessConfig {
  /** A backend's config (`type` is a key of BACKENDS), or `{ type: 'module', module }`: a module exporting a factory. */
  readonly backend: BackendConfig
  /** Base of the tools' relative paths, a path of the store (default: the backend's root). */
  readonly cwd?: string | undefined
  /** The fence; omitted, the safe defaults of {@link SandboxConfig}. */
  readonly sandbox?: SandboxConfig | undefined
  /** The read-before-write policy (default true). */
  readonly policy?: boolean | undefined
  readonly tools?: Partial<ToolsConfig> | undefined
}

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

async function backendConfig(raw: unknown): Promise<BackendConfig> {
  if (typeof raw === 'string') return parseFsUrl(raw, 'backend')
  const b = configObject(raw, 'backend')
  const type = b['type']
  if (type === 'module') {
    onlyKeys(b, 'backend', ['type', 'module'])
    return { type, module: str(b, 'backend', 'module', true) }
  }
  if (typeof type !== 'string' || !Object.hasOwn(BACKENDS, type)) throw new ConfigError('backend.type', BACKEND_TYPES, type)
  return (await backendDefinition(type, 'backend.type')).parseConfig(b, 'backend')
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
]

/**
 * Checks a parsed config (JSON or a module's export) and returns it typed, or
 * rejects with {@link ConfigError}. Asynchronous: a backend's keys are checked
 * by its package, imported when the config names it.
 */
export async function validateConfig(raw: unknown): Promise<HarnessConfig> {
  const c = configObject(raw, ROOT)
  onlyKeys(c, '', ['$schema', 'backend', 'cwd', 'sandbox', 'policy', 'tools'])
  if (c['backend'] === undefined) throw new ConfigError('backend', 'a backend (an object with a "type", or a URL string)', undefined)
  const backend = await backendConfig(c['backend'])
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
  return definedOnly({ backend, cwd: str(c, '', 'cwd'), sandbox, policy, tools })
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
