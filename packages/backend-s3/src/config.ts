/**
 * The S3 backend's configuration: `{ "type": "s3", "bucket": "b", … }` or
 * `--fs s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`. Keys are
 * never in the config: the SDK's own chain finds them (environment, profile…),
 * or `accessKeyIdEnv` and `secretAccessKeyEnv` (both, never one) name the
 * variables holding them.
 */
import {
  ConfigError,
  Found,
  configKey,
  configObject,
  parseConfigFields,
  parseConfigUrl,
  redactUrl,
  type BackendDefinition,
  type ConfigEnv,
  type ConfigField,
} from '@seamfs/core/backend'

export interface S3Config {
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

const FIELDS: readonly ConfigField[] = [
  { name: 'bucket', kind: 'string', required: true, doc: 'the bucket holding the filesystem' },
  { name: 'prefix', kind: 'string', allowEmpty: true, doc: 'key prefix that scopes the filesystem (default: the bucket root)' },
  { name: 'endpoint', kind: 'string', doc: 'endpoint of an S3-compatible server, e.g. `http://127.0.0.1:7480` (default: AWS)' },
  { name: 'region', kind: 'string', doc: 'region (default: `$AWS_REGION`, else `us-east-1`)' },
  { name: 'forcePathStyle', kind: 'boolean', doc: 'path-style URLs, which most self-hosted servers need (default false)' },
  {
    name: 'accessKeyIdEnv',
    kind: 'string',
    doc: "name of the environment variable holding the access key id; needs `secretAccessKeyEnv` (default: the SDK's chain)",
  },
  {
    name: 'secretAccessKeyEnv',
    kind: 'string',
    doc: "name of the environment variable holding the secret access key; needs `accessKeyIdEnv` (default: the SDK's chain)",
  },
]

/** The `--fs` query keys (each sets the config key of its name). */
const QUERY_KEYS = ['endpoint', 'region', 'forcePathStyle', 'accessKeyIdEnv', 'secretAccessKeyEnv']

/** The config's own checks, beyond each key's kind: the key pair is named whole, the endpoint holds no credentials. */
function checkConfig(config: S3Config, where: string): S3Config {
  const pair = [config.accessKeyIdEnv, config.secretAccessKeyEnv]
  if (pair.filter((name) => name !== undefined).length === 1) {
    const [missing, given] = config.accessKeyIdEnv === undefined ? ['accessKeyIdEnv', 'secretAccessKeyEnv'] : ['secretAccessKeyEnv', 'accessKeyIdEnv']
    throw new ConfigError(configKey(where, missing), `a variable name too, since ${given} is given (the two name one key)`, undefined)
  }
  if (config.endpoint !== undefined) {
    let url: URL
    try {
      url = new URL(config.endpoint)
    } catch {
      throw new ConfigError(configKey(where, 'endpoint'), 'a URL such as http://127.0.0.1:7480', redactUrl(config.endpoint))
    }
    if (url.username !== '' || url.password !== '') {
      throw new ConfigError(configKey(where, 'endpoint'), 'a URL without user or password (name the key variables instead)', new Found('credentials'))
    }
  }
  return config
}

function parseConfig(raw: unknown, where: string): S3Config {
  const value = configObject(raw, where)
  for (const secret of ['accessKeyId', 'secretAccessKey']) {
    if (value[secret] !== undefined) {
      throw new ConfigError(configKey(where, secret), `no key in the config (use ${secret}Env)`, new Found('a key'))
    }
  }
  return checkConfig(parseConfigFields(value, where, 's3', FIELDS) as S3Config, where)
}

/** Reads the variable `name` names, if it names one; unset is a ConfigError on `key`. */
function fromEnv(env: ConfigEnv, name: string | undefined, key: string): string | undefined {
  if (name === undefined) return undefined
  const value = env[name]
  if (value === undefined) throw new ConfigError(key, `the variable ${name} to be set`, undefined)
  return value
}

export const s3Backend: BackendDefinition<S3Config> = {
  type: 's3',
  url: 's3://<bucket>/<prefix>?endpoint=<url>&region=<region>&forcePathStyle=true',
  fields: FIELDS,
  parseConfig,
  fromUrl(spec, where) {
    const url = parseConfigUrl(spec, where, QUERY_KEYS)
    if (url.hostname === '') throw new ConfigError(where, 's3://<bucket>/<prefix>', redactUrl(spec))
    if (url.username !== '')
      throw new ConfigError(where, 'no user in an s3:// URL (name the key variables with accessKeyIdEnv and secretAccessKeyEnv)', new Found('a user'))
    if (url.port !== '') throw new ConfigError(where, 'no port in an s3:// URL (the bucket is no host: give ?endpoint=)', new Found('a port'))
    let prefix: string
    try {
      prefix = decodeURIComponent(url.pathname).replace(/^\//, '')
    } catch {
      throw new ConfigError(where, 'valid %-escapes in the URL', redactUrl(spec))
    }
    const query: Record<string, unknown> = Object.fromEntries(url.searchParams)
    const forcePathStyle = query['forcePathStyle']
    if (forcePathStyle === 'true' || forcePathStyle === 'false') query['forcePathStyle'] = forcePathStyle === 'true'
    return parseConfig({ bucket: url.hostname, ...(prefix === '' ? {} : { prefix }), ...query }, where)
  },
  async open(config, env) {
    const accessKeyId = fromEnv(env, config.accessKeyIdEnv, 'backend.accessKeyIdEnv')
    const secretAccessKey = fromEnv(env, config.secretAccessKeyEnv, 'backend.secretAccessKeyEnv')
    // Imported here: checking or describing a config never loads the AWS SDK.
    const { S3FileSystem } = await import('./s3-file-system.js')
    return S3FileSystem.open({
      bucket: config.bucket,
      ...(config.prefix === undefined ? {} : { prefix: config.prefix }),
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      region: config.region ?? env['AWS_REGION'] ?? 'us-east-1',
      ...(config.forcePathStyle === undefined ? {} : { forcePathStyle: config.forcePathStyle }),
      // checkConfig made sure both are named or neither.
      ...(accessKeyId !== undefined && secretAccessKey !== undefined ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    })
  },
  // The endpoint is a URL of its own: a password in it is not refused by parseConfigUrl, so it is redacted here.
  describe: (config) => `s3://${config.bucket}/${config.prefix ?? ''}${config.endpoint === undefined ? '' : ` at ${redactUrl(config.endpoint)}`}`,
}
