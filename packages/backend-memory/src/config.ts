/**
 * The memory backend's configuration: `{ "type": "memory", "files": { … } }`
 * or `--fs memory:`. Each mount starts from `files` (a {@link MemoryTree})
 * and keeps nothing after the process ends.
 */
import { ConfigError, parseConfigFields, type BackendDefinition, type ConfigField } from '@seamfs/core/backend'
import { MemoryFileSystem } from './memory-file-system.js'
import type { MemoryTree } from './options.js'

export interface MemoryConfig {
  readonly type: 'memory'
  readonly files?: Readonly<Record<string, unknown>> | undefined
  /** Parsed from an octal string (`"0640"`). */
  readonly newFileMode?: number | undefined
}

const FIELDS: readonly ConfigField[] = [
  {
    name: 'files',
    kind: 'object',
    doc: 'files to start with, path → entry: a string (a text file), `null` (a directory), `{ "symlink": target }`, `{ "content": text, "mode": bits }` (default: none)',
  },
  { name: 'newFileMode', kind: 'mode', doc: 'mode bits of new files, and of seeded files given as a string (default `"0600"`)' },
]

export const memoryBackend: BackendDefinition<MemoryConfig> = {
  type: 'memory',
  url: 'memory:',
  fields: FIELDS,
  parseConfig: (raw, where) => parseConfigFields(raw, where, 'memory', FIELDS) as MemoryConfig,
  fromUrl(spec, where) {
    if (spec !== 'memory:') throw new ConfigError(where, 'memory:', spec)
    return { type: 'memory' }
  },
  async open(config) {
    return new MemoryFileSystem({ files: config.files as MemoryTree | undefined, newFileMode: config.newFileMode })
  },
  describe: () => 'memory',
}
