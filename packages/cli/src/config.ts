/**
 * The harness config: which backend to mount and with what options, plus the
 * sandbox, the policy and the tools' caps. Swapping local for S3 or SFTP is a
 * change of `backend` and nothing else. Secrets never live here: S3 keys come
 * from the environment (the SDK's usual chain, or the variables named here),
 * SFTP keys from a key file or an environment variable.
 */
import type { SandboxMode } from '@seamfs/core'
import type { ToolsConfig } from '@seamfs/tools'

export type BackendConfig =
  | { readonly type: 'local'; readonly root: string }
  | { readonly type: 'memory'; readonly files?: Readonly<Record<string, unknown>> | undefined }
  | {
      readonly type: 's3'
      readonly bucket: string
      readonly prefix?: string | undefined
      readonly endpoint?: string | undefined
      readonly region?: string | undefined
      readonly forcePathStyle?: boolean | undefined
      /** Names of the environment variables holding the keys (default: the SDK's own chain). */
      readonly accessKeyIdEnv?: string | undefined
      readonly secretAccessKeyEnv?: string | undefined
    }
  | {
      readonly type: 'sftp'
      readonly host: string
      readonly port?: number | undefined
      readonly username: string
      readonly root?: string | undefined
      readonly privateKeyFile?: string | undefined
      /** Name of the environment variable holding the password. */
      readonly passwordEnv?: string | undefined
      /** The server's host key fingerprint (`SHA256:…`, as `ssh-keygen -l` prints it); unpinned when absent. */
      readonly hostKeySha256?: string | undefined
    }
  /** A module exporting a factory: the same module `seamfs-conformance` accepts. */
  | { readonly type: 'module'; readonly module: string }

export interface SandboxConfig {
  readonly mode: SandboxMode
  readonly workspaceRoot?: string | undefined
  readonly writableRoots?: readonly string[] | undefined
  readonly confineReads?: boolean | undefined
}

export interface HarnessConfig {
  readonly backend: BackendConfig
  /** Base of the tools' relative paths (default: the backend's own cwd). */
  readonly cwd?: string | undefined
  /** The mode fence; omit for none. */
  readonly sandbox?: SandboxConfig | undefined
  /** The read-before-write policy (default true). */
  readonly policy?: boolean | undefined
  readonly tools?: Partial<ToolsConfig> | undefined
}

/** A config the harness cannot use: which key, what was expected, what was found. Exit code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly key: string

  constructor(key: string, expected: string, found: unknown) {
    super(`config: ${key}: expected ${expected}, found ${describe(found)}`)
    this.key = key
  }
}

/** What was found, when it is told in words rather than shown as a value (an unknown key, a secret). */
export class Found {
  constructor(readonly text: string) {}
}

function describe(value: unknown): string {
  if (value instanceof Found) return value.text
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `the ${typeof value} ${value}`
  return `a ${typeof value}`
}

type Obj = Record<string, unknown>

/** The label of the whole config; its own keys are named bare (`cwd`, not `(config).cwd`). */
const ROOT = '(config)'
const sub = (key: string, name: string): string => (key === ROOT ? name : `${key}.${name}`)

function object(value: unknown, key: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(key, 'an object', value)
  return value as Obj
}

function only(value: Obj, key: string, allowed: readonly string[]): void {
  for (const k of Object.keys(value)) {
    if (!allowed.includes(k)) throw new ConfigError(sub(key, k), `one of the keys ${allowed.join(', ')}`, new Found('an unknown key'))
  }
}

function str(value: Obj, key: string, name: string, required: boolean): string | undefined {
  const v = value[name]
  if (v === undefined && !required) return undefined
  if (typeof v !== 'string' || v.trim() === '') throw new ConfigError(sub(key, name), 'a non-empty string', v)
  return v
}

function bool(value: Obj, key: string, name: string): boolean | undefined {
  const v = value[name]
  if (v === undefined) return undefined
  if (typeof v !== 'boolean') throw new ConfigError(sub(key, name), 'true or false', v)
  return v
}

/** Drops undefined fields, so optional keys stay absent under exactOptionalPropertyTypes. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

function backendConfig(raw: unknown): BackendConfig {
  if (typeof raw === 'string') return parseFsUrl(raw, 'backend')
  const b = object(raw, 'backend')
  const type = b['type']
  switch (type) {
    case 'local':
      only(b, 'backend', ['type', 'root'])
      return { type, root: str(b, 'backend', 'root', true) as string }
    case 'memory': {
      only(b, 'backend', ['type', 'files'])
      if (b['files'] === undefined) return { type }
      return { type, files: object(b['files'], 'backend.files') }
    }
    case 's3':
      for (const secret of ['accessKeyId', 'secretAccessKey']) {
        if (b[secret] !== undefined) {
          throw new ConfigError(`backend.${secret}`, `no key in the config (use ${secret}Env)`, new Found('a key'))
        }
      }
      only(b, 'backend', ['type', 'bucket', 'prefix', 'endpoint', 'region', 'forcePathStyle', 'accessKeyIdEnv', 'secretAccessKeyEnv'])
      return defined({
        type,
        bucket: str(b, 'backend', 'bucket', true) as string,
        prefix: typeof b['prefix'] === 'string' ? b['prefix'] : str(b, 'backend', 'prefix', false),
        endpoint: str(b, 'backend', 'endpoint', false),
        region: str(b, 'backend', 'region', false),
        forcePathStyle: bool(b, 'backend', 'forcePathStyle'),
        accessKeyIdEnv: str(b, 'backend', 'accessKeyIdEnv', false),
        secretAccessKeyEnv: str(b, 'backend', 'secretAccessKeyEnv', false),
      })
    case 'sftp': {
      if (b['password'] !== undefined) {
        throw new ConfigError('backend.password', 'no password in the config (use passwordEnv)', new Found('a password'))
      }
      only(b, 'backend', ['type', 'host', 'port', 'username', 'root', 'privateKeyFile', 'passwordEnv', 'hostKeySha256'])
      const port = b['port']
      if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) {
        throw new ConfigError('backend.port', 'a port number (1-65535)', port)
      }
      return defined({
        type,
        host: str(b, 'backend', 'host', true) as string,
        port: port,
        username: str(b, 'backend', 'username', true) as string,
        root: str(b, 'backend', 'root', false),
        privateKeyFile: str(b, 'backend', 'privateKeyFile', false),
        passwordEnv: str(b, 'backend', 'passwordEnv', false),
        hostKeySha256: str(b, 'backend', 'hostKeySha256', false),
      })
    }
    case 'module':
      only(b, 'backend', ['type', 'module'])
      return { type, module: str(b, 'backend', 'module', true) as string }
    default:
      throw new ConfigError('backend.type', 'one of "local", "memory", "s3", "sftp", "module"', type)
  }
}

const SANDBOX_MODES: readonly string[] = ['read-only', 'workspace-write', 'full-access']
const TOOL_KEYS: readonly string[] = [
  'listMaxEntries',
  'readLimit',
  'readMaxLineLength',
  'readMaxBytes',
  'readStreamMinSize',
  'globMaxResults',
  'grepMaxMatches',
  'grepMaxLineBytes',
  'searchTimeoutMs',
]

/** Checks a parsed config (JSON or a module's export) and returns it typed, or throws {@link ConfigError}. */
export function validateConfig(raw: unknown): HarnessConfig {
  const c = object(raw, ROOT)
  only(c, ROOT, ['$schema', 'backend', 'cwd', 'sandbox', 'policy', 'tools'])
  if (c['backend'] === undefined) throw new ConfigError('backend', 'a backend (an object with a "type", or a URL string)', undefined)
  const backend = backendConfig(c['backend'])
  let sandbox: SandboxConfig | undefined
  if (c['sandbox'] !== undefined) {
    const s = object(c['sandbox'], 'sandbox')
    only(s, 'sandbox', ['mode', 'workspaceRoot', 'writableRoots', 'confineReads'])
    if (typeof s['mode'] !== 'string' || !SANDBOX_MODES.includes(s['mode'])) {
      throw new ConfigError('sandbox.mode', 'one of "read-only", "workspace-write", "full-access"', s['mode'])
    }
    const roots = s['writableRoots']
    if (roots !== undefined && (!Array.isArray(roots) || !roots.every((r) => typeof r === 'string' && r !== ''))) {
      throw new ConfigError('sandbox.writableRoots', 'an array of non-empty strings', roots)
    }
    sandbox = defined({
      mode: s['mode'] as SandboxMode,
      workspaceRoot: str(s, 'sandbox', 'workspaceRoot', false),
      writableRoots: roots as string[] | undefined,
      confineReads: bool(s, 'sandbox', 'confineReads'),
    })
  }
  const policy = bool(c, ROOT, 'policy')
  let tools: Partial<ToolsConfig> | undefined
  if (c['tools'] !== undefined) {
    const t = object(c['tools'], 'tools')
    only(t, 'tools', TOOL_KEYS)
    for (const [k, v] of Object.entries(t)) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new ConfigError(`tools.${k}`, 'a positive integer', v)
    }
    tools = t
  }
  return defined({ backend, cwd: str(c, ROOT, 'cwd', false), sandbox, policy, tools })
}

/** A URL as it may be printed back: any password replaced. */
function redact(spec: string): string {
  return spec.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:***@')
}

/**
 * The short forms of `--fs`: `file:./work` (or a plain path), `memory:`,
 * `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`,
 * `sftp://user@host:port/path?key=~/.ssh/id_ed25519`. A password in a URL is
 * refused: it would be printed back and kept in shell history. `key` names the
 * option in messages (`backend` when the URL is the config's backend).
 */
export function parseFsUrl(spec: string, key = '--fs'): BackendConfig {
  if (spec === 'memory:' || spec === 'memory') return { type: 'memory' }
  if (spec.startsWith('file:')) {
    const root = spec.startsWith('file://') ? decodeURIComponent(new URL(spec).pathname) : spec.slice('file:'.length)
    if (root === '') throw new ConfigError(key, 'file:<directory>', spec)
    return { type: 'local', root }
  }
  if (spec.startsWith('s3://') || spec.startsWith('sftp://')) {
    let url: URL
    try {
      url = new URL(spec)
    } catch {
      throw new ConfigError(key, 'a valid URL', redact(spec))
    }
    if (url.password !== '') throw new ConfigError(key, 'no password in the URL (use an environment variable)', new Found('a password'))
    const query = Object.fromEntries(url.searchParams)
    const path = decodeURIComponent(url.pathname)
    if (url.protocol === 's3:') {
      if (url.hostname === '') throw new ConfigError(key, 's3://<bucket>/<prefix>', spec)
      const prefix = path.replace(/^\//, '')
      return defined({
        type: 's3' as const,
        bucket: url.hostname,
        prefix: prefix === '' ? undefined : prefix,
        endpoint: query['endpoint'],
        region: query['region'],
        forcePathStyle: query['forcePathStyle'] === undefined ? undefined : query['forcePathStyle'] === 'true',
      })
    }
    if (url.username === '' || url.hostname === '') throw new ConfigError(key, 'sftp://<user>@<host>[:port]/<path>', spec)
    if (url.port === '0') throw new ConfigError(key, 'a port number (1-65535)', 0)
    return defined({
      type: 'sftp' as const,
      host: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      username: decodeURIComponent(url.username),
      root: path === '' || path === '/' ? undefined : path,
      privateKeyFile: query['key'],
    })
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec) && !/^[a-z]:[\\/]/i.test(spec)) {
    throw new ConfigError(key, 'file:, memory:, s3:// or sftp://', redact(spec))
  }
  if (spec.endsWith('.js') || spec.endsWith('.mjs') || spec.endsWith('.ts')) return { type: 'module', module: spec }
  return { type: 'local', root: spec }
}
