/**
 * The SFTP backend's configuration: `{ "type": "sftp", "host": "h",
 * "username": "u", … }` or `--fs sftp://user@host:port/path?key=~/.ssh/id`.
 * No password or key is ever in the config: `privateKeyFile` names a key file,
 * `passwordEnv` an environment variable. Pin the server with `hostKeySha256`.
 */
import { readFileSync } from 'node:fs'
import {
  ConfigError,
  Found,
  configKey,
  configObject,
  configPath,
  parseConfigFields,
  parseConfigUrl,
  type BackendDefinition,
  type ConfigField,
} from '@seamfs/core/backend'

export interface SftpConfig {
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
    doc: 'file holding an OpenSSH private key (a relative path starts at the base directory: the current directory of the CLI; `~` is home)',
  },
  { name: 'passwordEnv', kind: 'string', doc: 'name of the environment variable holding the password' },
  {
    name: 'hostKeySha256',
    kind: 'string',
    doc: "the server's host key fingerprint as `ssh-keygen -l -E sha256` prints it (`SHA256:…`); any host key is accepted when absent",
  },
]

export const sftpBackend: BackendDefinition<SftpConfig> = {
  type: 'sftp',
  url: 'sftp://<user>@<host>[:port]/<path>?key=<private key file>',
  fields: FIELDS,
  parseConfig(raw, where) {
    const value = configObject(raw, where)
    if (value['password'] !== undefined) {
      throw new ConfigError(configKey(where, 'password'), 'no password in the config (use passwordEnv)', new Found('a password'))
    }
    return parseConfigFields(value, where, 'sftp', FIELDS) as SftpConfig
  },
  fromUrl(spec, where) {
    const url = parseConfigUrl(spec, where)
    if (url.username === '' || url.hostname === '') throw new ConfigError(where, 'sftp://<user>@<host>[:port]/<path>', spec)
    if (url.port === '0') throw new ConfigError(where, 'a port number (1-65535)', 0)
    const path = decodeURIComponent(url.pathname)
    const key = Object.fromEntries(url.searchParams)['key']
    return {
      type: 'sftp',
      host: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      username: decodeURIComponent(url.username),
      ...(path === '' || path === '/' ? {} : { root: path }),
      ...(key === undefined ? {} : { privateKeyFile: key }),
    }
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
    // Imported here: checking or describing a config never loads ssh2.
    const { SftpFileSystem } = await import('./sftp-file-system.js')
    return new SftpFileSystem({
      host: config.host,
      username: config.username,
      ...(config.port === undefined ? {} : { port: config.port }),
      ...(config.root === undefined ? {} : { root: config.root }),
      ...(privateKey === undefined ? {} : { privateKey }),
      ...(password === undefined ? {} : { password }),
      ...(config.hostKeySha256 === undefined ? {} : { hostKeySha256: config.hostKeySha256 }),
    })
  },
  describe: (config) => `sftp://${config.username}@${config.host}${config.port === undefined ? '' : `:${config.port}`}${config.root ?? ''}`,
}
