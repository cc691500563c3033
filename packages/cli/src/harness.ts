import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FileSystem, ObservationPolicy, SandboxedFileSystem } from '@seamfs/core'
import type { ConfigEnv } from '@seamfs/core/backend'
import { createFileTools, type FileTool } from '@seamfs/tools'
import { backendDefinition } from './backends.js'
import { ConfigError, validateConfig, type BackendConfig, type HarnessConfig } from './config.js'

/** A mounted harness: the composed filesystem (backend → sandbox), the policy and the tools. */
export interface Harness {
  readonly config: HarnessConfig
  /** What was mounted, for people (never a secret). */
  readonly description: string
  readonly backend: FileSystem
  readonly fs: FileSystem
  readonly policy: ObservationPolicy | undefined
  readonly tools: FileTool[]
  tool(name: string): FileTool
  close(): Promise<void>
}

export interface LoadOptions {
  /** Where relative paths of the config (local root, module, key file) start (default: cwd). */
  readonly baseDir?: string
  /** Environment to read secrets from (default: process.env). */
  readonly env?: ConfigEnv
}

function isFileSystem(value: unknown): value is FileSystem {
  const v = value as Partial<FileSystem> | null
  return typeof v === 'object' && v !== null && typeof v.resolve === 'function' && typeof v.readText === 'function'
}

/** Whatever a backend module exports: a FileSystem, conformance options with `create()`, or a function giving either. */
async function fromModule(specifier: string, baseDir: string): Promise<FileSystem> {
  const path = resolve(baseDir, specifier)
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>
  } catch (err) {
    throw new ConfigError('backend.module', 'a module that can be imported', `${specifier} (${(err as Error).message})`)
  }
  let value: unknown = mod['default'] ?? mod['conformance'] ?? mod['createFileSystem']
  if (typeof value === 'function' && !isFileSystem(value)) value = await (value as () => unknown)()
  if (typeof value === 'object' && value !== null && typeof (value as { create?: unknown }).create === 'function') {
    value = await (value as { create: () => unknown }).create()
    value = (value as { fs?: unknown }).fs ?? value
  }
  if (!isFileSystem(value)) {
    throw new ConfigError('backend.module', 'a module exporting a FileSystem, a factory, or conformance options', specifier)
  }
  return value
}

/** A `{ type: 'module' }` backend is the CLI's own; every other type is opened by its package. */
async function mountBackend(b: BackendConfig, baseDir: string, env: ConfigEnv): Promise<FileSystem> {
  if (b.type === 'module') return fromModule(b['module'] as string, baseDir)
  return (await backendDefinition(b.type, 'backend.type')).open(b, env, baseDir)
}

/** What was mounted, without secrets. */
export async function describeBackend(b: BackendConfig): Promise<string> {
  if (b.type === 'module') return `module ${b['module'] as string}`
  return (await backendDefinition(b.type, 'backend.type')).describe(b)
}

/**
 * Mounts what `config` says: the backend, the sandbox around it, the policy
 * and the tools. Throws {@link ConfigError} for anything wrong in the config.
 */
export async function loadHarness(rawConfig: unknown, options: LoadOptions = {}): Promise<Harness> {
  const config = await validateConfig(rawConfig)
  const baseDir = options.baseDir ?? process.cwd()
  const backend = await mountBackend(config.backend, baseDir, options.env ?? process.env)
  const fs =
    config.sandbox === undefined
      ? backend
      : new SandboxedFileSystem(backend, {
          mode: config.sandbox.mode,
          workspaceRoot: config.sandbox.workspaceRoot ?? config.cwd ?? '.',
          writableRoots: config.sandbox.writableRoots,
          confineReads: config.sandbox.confineReads,
        })
  const policy = config.policy === false ? undefined : new ObservationPolicy()
  let tools: FileTool[]
  try {
    tools = createFileTools({ fs, policy, cwd: config.cwd, config: config.tools })
  } catch (err) {
    throw new ConfigError('tools', 'valid tool settings', (err as Error).message)
  }
  const sandbox = config.sandbox === undefined ? '' : `, sandbox ${config.sandbox.mode}`
  return {
    config,
    description: `${await describeBackend(config.backend)}${sandbox}${policy === undefined ? ', no policy' : ''}`,
    backend,
    fs,
    policy,
    tools,
    tool(name) {
      const tool = tools.find((t) => t.name === name)
      if (tool === undefined) throw new Error(`no tool named ${name}`)
      return tool
    },
    close: () => fs.close(),
  }
}
