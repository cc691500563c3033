/**
 * The SFTP backend's configuration: `{ "type": "sftp", "host": "h",
 * "username": "u", … }` or `--fs sftp://user@host:port/path?key=~/.ssh/id`.
 * No password or key is ever in the config: `privateKeyFile` names a key file,
 * `passwordEnv` an environment variable, `agent` (or `$SSH_AUTH_SOCK`) an
 * ssh-agent. The server's host key is checked against `hostKeySha256`, else
 * against a known_hosts file; accepting any key needs `insecureAcceptAnyHostKey`.
 */
import { existsSync, readFileSync } from 'node:fs'
import {
  ConfigError,
  Found,
  configKey,
  configObject,
  configPath,
  parseConfigFields,
  parseConfigUrl,
  redactUrl,
  type BackendDefinition,
  type ConfigField,
} from '@seamfs/core/backend'
import { isSha256Fingerprint } from './known-hosts.js'

export interface SftpConfig {
  readonly type: 'sftp'
  readonly host: string
  readonly port?: number | undefined
  readonly username: string
  readonly root?: string | undefined
  readonly privateKeyFile?: string | undefined
  /** Name of the environment variable holding the password. */
  readonly passwordEnv?: string | undefined
  /** The ssh-agent socket (default `$SSH_AUTH_SOCK` of the env given to `open`, when there is no key file and no password). */
  readonly agent?: string | undefined
  /** The server's host key fingerprint (`SHA256:…`, as `ssh-keygen -l` prints it); when absent, `knownHostsFile` decides. */
  readonly hostKeySha256?: string | undefined
  /** The OpenSSH known_hosts file (default `~/.ssh/known_hosts`). */
  readonly knownHostsFile?: string | undefined
  /** Accept any host key, unchecked: insecure, and shown in the description. */
  readonly insecureAcceptAnyHostKey?: boolean | undefined
  /** Mode bits of new files (default 0o600). */
  readonly newFileMode?: number | undefined
}

const FIELDS: readonly ConfigField[] = [
  { name: 'host', kind: 'string', required: true, doc: 'server host name or address' },
  { name: 'port', kind: 'port', doc: 'server port (default 22)' },
  { name: 'username', kind: 'string', required: true, doc: 'login name' },
  {
    name: 'root',
    kind: 'string',
    doc: 'remote directory that scopes the filesystem, relative to the login directory (default: the login directory); must exist',
  },
  {
    name: 'privateKeyFile',
    kind: 'string',
    doc: 'file holding an OpenSSH private key (a relative path starts at the directory of the config file, or the current directory for `--fs`; `~` is home)',
  },
  { name: 'passwordEnv', kind: 'string', doc: 'name of the environment variable holding the password' },
  {
    name: 'agent',
    kind: 'string',
    doc: 'ssh-agent socket to authenticate with (default: `$SSH_AUTH_SOCK`, when neither `privateKeyFile` nor `passwordEnv` is given)',
  },
  {
    name: 'hostKeySha256',
    kind: 'string',
    doc: "the server's host key fingerprint as `ssh-keygen -l -E sha256` prints it (`SHA256:…`); when absent, `knownHostsFile` is checked",
  },
  {
    name: 'knownHostsFile',
    kind: 'string',
    doc: 'OpenSSH known_hosts file the host key is checked against when `hostKeySha256` is absent; an unknown host is refused (default `~/.ssh/known_hosts`)',
  },
  {
    name: 'insecureAcceptAnyHostKey',
    kind: 'boolean',
    doc: 'INSECURE: accept any host key, unchecked (default false); only for throwaway test servers',
  },
  { name: 'newFileMode', kind: 'mode', doc: 'mode bits of new files (default `"0600"`)' },
]

/** The `--fs` query keys, by the config key each sets. */
const QUERY: Readonly<Record<string, string>> = {
  key: 'privateKeyFile',
  passwordEnv: 'passwordEnv',
  agent: 'agent',
  hostKeySha256: 'hostKeySha256',
  knownHostsFile: 'knownHostsFile',
  insecureAcceptAnyHostKey: 'insecureAcceptAnyHostKey',
  newFileMode: 'newFileMode',
}

/** The config's own checks, beyond each key's kind. */
function checkConfig(config: SftpConfig, where: string): SftpConfig {
  if (config.hostKeySha256 !== undefined && !isSha256Fingerprint(config.hostKeySha256)) {
    throw new ConfigError(
      configKey(where, 'hostKeySha256'),
      'a fingerprint as ssh-keygen -l -E sha256 prints it (SHA256: and 43 base64 characters)',
      config.hostKeySha256,
    )
  }
  if (config.insecureAcceptAnyHostKey === true && (config.hostKeySha256 !== undefined || config.knownHostsFile !== undefined)) {
    throw new ConfigError(configKey(where, 'insecureAcceptAnyHostKey'), 'no hostKeySha256 or knownHostsFile beside it', true)
  }
  return config
}

/** A `%`-decoded part of a URL; a malformed escape is a ConfigError that shows the URL redacted. */
function decoded(part: string, spec: string, where: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new ConfigError(where, 'valid %-escapes in the URL', redactUrl(spec))
  }
}

function parseConfig(raw: unknown, where: string): SftpConfig {
  const value = configObject(raw, where)
  if (value['password'] !== undefined) {
    throw new ConfigError(configKey(where, 'password'), 'no password in the config (use passwordEnv)', new Found('a password'))
  }
  return checkConfig(parseConfigFields(value, where, 'sftp', FIELDS) as SftpConfig, where)
}

/** `root` as an sftp URI's path: absolute as it is, relative to the login directory under `/~/`. */
function rootInUrl(root: string | undefined): string {
  if (root === undefined) return ''
  return root.startsWith('/') ? root : `/~/${root}`
}

export const sftpBackend: BackendDefinition<SftpConfig> = {
  type: 'sftp',
  url: 'sftp://<user>@<host>[:port]/<path>?key=<private key file>&hostKeySha256=<SHA256:…>',
  fields: FIELDS,
  parseConfig,
  fromUrl(spec, where) {
    const url = parseConfigUrl(spec, where, Object.keys(QUERY))
    if (url.username === '' || url.hostname === '') throw new ConfigError(where, 'sftp://<user>@<host>[:port]/<path>', redactUrl(spec))
    if (url.port === '0') throw new ConfigError(where, 'a port number (1-65535)', 0)
    const path = decoded(url.pathname, spec, where)
    const query: Record<string, unknown> = {}
    for (const [k, v] of url.searchParams) {
      const name = QUERY[k] as string
      query[name] = FIELDS.find((f) => f.name === name)?.kind === 'boolean' && (v === 'true' || v === 'false') ? v === 'true' : v
    }
    const raw = {
      host: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      username: decoded(url.username, spec, where),
      // `/~/x` (and `/~`): relative to the login directory, as sftp URIs write it.
      ...(path === '' || path === '/' || path === '/~' || path === '/~/' ? {} : { root: path.startsWith('/~/') ? path.slice(3) : path }),
      ...query,
    }
    return parseConfig(raw, where)
  },
  async open(config, env, baseDir) {
    let privateKey: string | undefined
    if (config.privateKeyFile !== undefined) {
      try {
        privateKey = readFileSync(configPath(config.privateKeyFile, baseDir), 'utf8')
      } catch {
        throw new ConfigError('backend.privateKeyFile', 'a readable key file', config.privateKeyFile)
      }
    }
    const password = config.passwordEnv === undefined ? undefined : env[config.passwordEnv]
    if (config.passwordEnv !== undefined && password === undefined) {
      throw new ConfigError('backend.passwordEnv', `the variable ${config.passwordEnv} to be set`, undefined)
    }
    const knownHostsFile = config.knownHostsFile === undefined ? undefined : configPath(config.knownHostsFile, baseDir)
    if (knownHostsFile !== undefined && !existsSync(knownHostsFile)) {
      throw new ConfigError('backend.knownHostsFile', 'an existing known_hosts file', config.knownHostsFile)
    }
    const fromEnv = privateKey === undefined && password === undefined ? env['SSH_AUTH_SOCK'] : undefined
    const agent = config.agent !== undefined ? configPath(config.agent, baseDir) : fromEnv === '' ? undefined : fromEnv
    // Imported here: checking or describing a config never loads ssh2.
    const { SftpFileSystem } = await import('./sftp-file-system.js')
    return new SftpFileSystem({
      host: config.host,
      username: config.username,
      ...(config.port === undefined ? {} : { port: config.port }),
      ...(config.root === undefined ? {} : { root: config.root }),
      ...(privateKey === undefined ? {} : { privateKey }),
      ...(password === undefined ? {} : { password }),
      ...(agent === undefined ? {} : { agent }),
      ...(config.hostKeySha256 === undefined ? {} : { hostKeySha256: config.hostKeySha256 }),
      ...(knownHostsFile === undefined ? {} : { knownHostsFile }),
      ...(config.insecureAcceptAnyHostKey === true ? { acceptAnyHostKey: true } : {}),
      ...(config.newFileMode === undefined ? {} : { newFileMode: config.newFileMode }),
    })
  },
  describe: (config) =>
    `sftp://${config.username}@${config.host}${config.port === undefined ? '' : `:${config.port}`}${rootInUrl(config.root)}` +
    (config.insecureAcceptAnyHostKey === true ? ' (INSECURE: any host key accepted)' : ''),
}
