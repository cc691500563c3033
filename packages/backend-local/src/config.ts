/**
 * The local backend's configuration: `{ "type": "local", "root": "./work" }`
 * or `--fs file:./work`. A relative root starts at the harness's base
 * directory, `~` at the home directory; the root must be an existing directory.
 */
import { statSync } from 'node:fs'
import { ConfigError, Found, configPath, parseConfigFields, parseConfigUrl, redactUrl, type BackendDefinition, type ConfigField } from '@seamfs/core/backend'
import { LocalFileSystem } from './local-file-system.js'

export interface LocalConfig {
  readonly type: 'local'
  readonly root: string
  /** Parsed from an octal string (`"0640"`). */
  readonly newFileMode?: number | undefined
}

const FIELDS: readonly ConfigField[] = [
  {
    name: 'root',
    kind: 'string',
    required: true,
    doc: 'the directory to mount; must exist (a relative path starts at the directory of the config file, or the current directory for `--fs`; `~` is home)',
  },
  { name: 'newFileMode', kind: 'mode', doc: 'mode bits of new files (default `"0600"`)' },
]

export const localBackend: BackendDefinition<LocalConfig> = {
  type: 'local',
  url: 'file:<directory>',
  fields: FIELDS,
  parseConfig: (raw, where) => parseConfigFields(raw, where, 'local', FIELDS) as LocalConfig,
  fromUrl(spec, where) {
    let root = spec.slice('file:'.length)
    if (spec.startsWith('file://')) {
      // A file URL names this machine: a host other than localhost, a user or a password is refused (never echoed).
      const url = parseConfigUrl(spec, where)
      if (url.username !== '' || (url.hostname !== '' && url.hostname !== 'localhost')) {
        throw new ConfigError(
          where,
          'file:///<absolute directory> (a file URL of this machine)',
          new Found(`a URL naming the host ${JSON.stringify(url.hostname)}`),
        )
      }
      root = decodeURIComponent(url.pathname)
    }
    if (root === '') throw new ConfigError(where, 'file:<directory>', redactUrl(spec))
    return { type: 'local', root }
  },
  async open(config, _env, baseDir) {
    const root = configPath(config.root, baseDir)
    if (statSync(root, { throwIfNoEntry: false })?.isDirectory() !== true) {
      throw new ConfigError('backend.root', 'an existing directory', config.root)
    }
    return new LocalFileSystem({ cwd: root, newFileMode: config.newFileMode })
  },
  describe: (config, baseDir) => `local disk at ${baseDir === undefined ? config.root : configPath(config.root, baseDir)}`,
}
