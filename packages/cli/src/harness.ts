import { readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FileSystem, ObservationPolicy, SandboxedFileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem, type MemoryTree } from '@seamfs/backend-memory'
import { createFileTools, type FileTool } from '@seamfs/tools'
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
  readonly env?: Readonly<Record<string, string | undefined>>
}

const expandHome = (path: string): string => (path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path)

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
    value = (await (value as { create: () => unknown }).create())
    value = (value as { fs?: unknown }).fs ?? value
  }
  if (!isFileSystem(value)) {
    throw new ConfigError('backend.module', 'a module exporting a FileSystem, a factory, or conformance options', specifier)
  }
  return value
}

/** Loose shapes of the remote backends, imported only when configured. */
type RemoteModule = Record<string, unknown>

async function remote(name: string): Promise<RemoteModule> {
  try {
    return (await import(name)) as RemoteModule
  } catch (err) {
    throw new ConfigError('backend.type', `an installed ${name}`, (err as Error).message)
  }
}

async function construct(mod: RemoteModule, className: string, options: Record<string, unknown>): Promise<FileSystem> {
  const ctor = mod[className] as (new (o: unknown) => FileSystem) & { open?: (o: unknown) => Promise<FileSystem> }
  if (typeof ctor !== 'function') throw new ConfigError('backend.type', `a package exporting ${className}`, undefined)
  return typeof ctor.open === 'function' ? ctor.open(options) : new ctor(options)
}

async function mountBackend(b: BackendConfig, baseDir: string, env: LoadOptions['env'] & object): Promise<FileSystem> {
  switch (b.type) {
    case 'local': {
      const root = resolve(baseDir, expandHome(b.root))
      if (statSync(root, { throwIfNoEntry: false })?.isDirectory() !== true) {
        throw new ConfigError('backend.root', 'an existing directory', b.root)
      }
      return new LocalFileSystem({ cwd: root })
    }
    case 'memory':
      return new MemoryFileSystem(b.files === undefined ? {} : { files: b.files as MemoryTree })
    case 's3': {
      const accessKeyId = b.accessKeyIdEnv === undefined ? undefined : env[b.accessKeyIdEnv]
      const secretAccessKey = b.secretAccessKeyEnv === undefined ? undefined : env[b.secretAccessKeyEnv]
      if (b.accessKeyIdEnv !== undefined && accessKeyId === undefined) {
        throw new ConfigError('backend.accessKeyIdEnv', `the variable ${b.accessKeyIdEnv} to be set`, undefined)
      }
      if (b.secretAccessKeyEnv !== undefined && secretAccessKey === undefined) {
        throw new ConfigError('backend.secretAccessKeyEnv', `the variable ${b.secretAccessKeyEnv} to be set`, undefined)
      }
      const credentials = accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined
      return construct(await remote('@seamfs/backend-s3'), 'S3FileSystem', {
        bucket: b.bucket,
        ...(b.prefix === undefined ? {} : { prefix: b.prefix }),
        ...(b.endpoint === undefined ? {} : { endpoint: b.endpoint }),
        region: b.region ?? env['AWS_REGION'] ?? 'us-east-1',
        ...(b.forcePathStyle === undefined ? {} : { forcePathStyle: b.forcePathStyle }),
        ...(credentials === undefined ? {} : { credentials }),
      })
    }
    case 'sftp': {
      let privateKey: string | undefined
      if (b.privateKeyFile !== undefined) {
        try {
          privateKey = readFileSync(resolve(baseDir, expandHome(b.privateKeyFile)), 'utf8')
        } catch {
          throw new ConfigError('backend.privateKeyFile', 'a readable key file', b.privateKeyFile)
        }
      }
      const password = b.passwordEnv === undefined ? undefined : env[b.passwordEnv]
      if (b.passwordEnv !== undefined && password === undefined) {
        throw new ConfigError('backend.passwordEnv', `the variable ${b.passwordEnv} to be set`, undefined)
      }
      return construct(await remote('@seamfs/backend-ssh'), 'SftpFileSystem', {
        host: b.host,
        username: b.username,
        ...(b.port === undefined ? {} : { port: b.port }),
        ...(b.root === undefined ? {} : { root: b.root }),
        ...(privateKey === undefined ? {} : { privateKey }),
        ...(password === undefined ? {} : { password }),
        ...(b.hostKeySha256 === undefined ? {} : { hostKeySha256: b.hostKeySha256 }),
      })
    }
    case 'module':
      return fromModule(b.module, baseDir)
  }
}

/** What was mounted, without secrets. */
export function describeBackend(b: BackendConfig): string {
  switch (b.type) {
    case 'local':
      return `local disk at ${b.root}`
    case 'memory':
      return 'memory'
    case 's3':
      return `s3://${b.bucket}/${b.prefix ?? ''}${b.endpoint === undefined ? '' : ` at ${b.endpoint}`}`
    case 'sftp':
      return `sftp://${b.username}@${b.host}${b.port === undefined ? '' : `:${b.port}`}${b.root ?? ''}`
    case 'module':
      return `module ${b.module}`
  }
}

/**
 * Mounts what `config` says: the backend, the sandbox around it, the policy
 * and the tools. Throws {@link ConfigError} for anything wrong in the config.
 */
export async function loadHarness(rawConfig: unknown, options: LoadOptions = {}): Promise<Harness> {
  const config = validateConfig(rawConfig)
  const baseDir = options.baseDir ?? process.cwd()
  const backend = await mountBackend(config.backend, baseDir, options.env ?? process.env)
  const fs = config.sandbox === undefined
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
    description: `${describeBackend(config.backend)}${sandbox}${policy === undefined ? ', no policy' : ''}`,
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

