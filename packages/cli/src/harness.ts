import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  AuditLog,
  auditLogFiles,
  DEFAULT_PROTECTED_NAMES,
  EventedFileSystem,
  FileSystem,
  ObservationPolicy,
  SandboxedFileSystem,
  registerLoadedPackage,
  isFsError,
  type SandboxOptions,
} from '@seamfs/core'
import { Found, isConfigError, type ConfigEnv } from '@seamfs/core/backend'
import { createFileTools, OverlayFileSystem, type FileTool } from '@seamfs/tools'
import { backendDefinition } from './backends.js'
import { ConfigError, validateConfig, type BackendConfig, type HarnessConfig } from './config.js'
import { withConfigKey } from './config-error-text.js'
import { describeMounts, openMounts } from './mounts.js'

/** The name of the harness config the CLI looks for; read-only to the model wherever it appears. */
export const CONFIG_FILE = 'seamfs.config.json'

/**
 * Names read-only to the model wherever they appear: core's {@link DEFAULT_PROTECTED_NAMES}, what
 * tools the user runs execute (`.git`, `node_modules`, package-manager config, `.husky`) and any
 * {@link CONFIG_FILE}.
 */
export const PROTECTED_NAMES: readonly string[] = [...new Set([...DEFAULT_PROTECTED_NAMES, CONFIG_FILE])]

/** The root of the installed package whose entry `specifier` resolves to (the nearest package.json naming it). */
function packageRoot(specifier: string): string | undefined {
  let dir: string
  try {
    dir = dirname(fileURLToPath(import.meta.resolve(specifier)))
  } catch {
    return undefined
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === specifier) return dir
  }
  return undefined
}

/**
 * The code the next start of this harness runs, as paths of this machine: every `node_modules`
 * directory Node would look in for the CLI's dependencies (existing or not: a new one would shadow
 * an installed package), and each seamfs package's manifest and build. A model that could write
 * them could run code outside any sandbox the next time seamfs starts.
 */
export function harnessCodePaths(backendPackage?: string): string[] {
  const lookups = createRequire(import.meta.url).resolve.paths('commander') ?? []
  const packages = ['@seamfs/cli', '@seamfs/core', '@seamfs/tools', '@seamfs/mcp', ...(backendPackage === undefined ? [] : [backendPackage])]
  const roots = packages.map(packageRoot).filter((root): root is string => root !== undefined)
  return [...lookups, ...roots.flatMap((root) => [join(root, 'package.json'), join(root, 'dist'), join(root, 'bin')])]
}

/** The fence a harness puts around its backend: the config's `sandbox` block over the safe defaults. */
export type HarnessSandbox = Required<Pick<SandboxOptions, 'mode' | 'workspaceRoot' | 'confineReads'>> & Pick<SandboxOptions, 'writableRoots'>

/** A mounted harness: the composed filesystem (backend, or the mounts → sandbox), the policy and the tools. */
export interface Harness {
  readonly config: HarnessConfig
  /** What was mounted and how it is fenced, for people, in one line (never a secret). */
  readonly description: string
  /** What in the config a person should look at, one sentence each (a mount that may reach a read-only one); the CLI prints them. */
  readonly warnings: readonly string[]
  /** The fence in force (the defaults filled in). */
  readonly sandbox: HarnessSandbox
  /** The store under the sandbox: the backend, or the `MountFileSystem` of the config's `mounts` (with an overlay: the overlay over it). */
  readonly backend: FileSystem
  /** With the config's `overlay`: the overlay the model works on, whose changes a person commits or discards. */
  readonly overlay: OverlayFileSystem | undefined
  readonly fs: FileSystem
  readonly policy: ObservationPolicy | undefined
  readonly tools: FileTool[]
  tool(name: string): FileTool
  /**
   * The tools fenced to `roots` as well (paths of the store, the first the workspace: relative paths
   * start there): a second sandbox over {@link fs}, so they narrow the fence in force and never widen
   * it. Mutations stay as the mode allows (`full-access` becomes `workspace-write` in the roots); reads
   * are confined to them. The policy is the harness's own. What `seamfs mcp` serves a client that lists
   * its roots.
   */
  toolsWithin(roots: readonly string[]): FileTool[]
  close(): Promise<void>
}

export interface LoadOptions {
  /**
   * Where the config's relative paths of THIS machine start (a local root, a module, a key file):
   * the directory of the config file it came from (default: the process's cwd).
   */
  readonly baseDir?: string
  /** Environment to read secrets from (default: process.env). */
  readonly env?: ConfigEnv
  /**
   * Files of this machine the model must not change whatever the mode (absolute, or relative to
   * `baseDir`): the config file in use, a session file. The module a config names is added, and
   * any file named {@link CONFIG_FILE} and any `.git` directory are always protected. They are
   * fenced through the backend, so they matter where the backend is this machine's disk.
   */
  readonly protect?: readonly string[]
}

function isFileSystem(value: unknown): value is FileSystem {
  const v = value as Partial<FileSystem> | null
  return typeof v === 'object' && v !== null && typeof v.resolve === 'function' && typeof v.readText === 'function'
}

/**
 * Whatever a backend module exports: a FileSystem, conformance options with `create()`, or a function giving either.
 * `key` names the module in errors (`backend.module`).
 */
async function fromModule(specifier: string, baseDir: string, key: string): Promise<FileSystem> {
  const path = resolve(baseDir, specifier)
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>
  } catch (err) {
    throw new ConfigError(key, 'a module that can be imported', `${specifier} (${(err as Error).message})`)
  }
  let value: unknown = mod['default'] ?? mod['conformance'] ?? mod['createFileSystem']
  if (typeof value === 'function' && !isFileSystem(value)) value = await (value as () => unknown)()
  if (typeof value === 'object' && value !== null && typeof (value as { create?: unknown }).create === 'function') {
    value = await (value as { create: () => unknown }).create()
    value = (value as { fs?: unknown }).fs ?? value
  }
  if (!isFileSystem(value)) {
    throw new ConfigError(key, 'a module exporting a FileSystem, a factory, or conformance options', specifier)
  }
  return value
}

/** `err` with its key moved from under `backend` (where a package's `open` names it) to under `where`. */
function rekeyed(err: unknown, where: string): unknown {
  if (!isConfigError(err) || where === 'backend' || !(err.key === 'backend' || err.key.startsWith('backend.'))) return err
  return withConfigKey(err, where + err.key.slice('backend'.length))
}

/**
 * Opens one backend; `where` names its config in errors (`backend`, `mounts["/docs"]`). A
 * `{ type: 'module' }` backend is the CLI's own; every other type is opened by its package.
 */
export async function mountBackend(b: BackendConfig, baseDir: string, env: ConfigEnv, where = 'backend'): Promise<FileSystem> {
  if (b.type === 'module') return fromModule(b['module'] as string, baseDir, `${where}.module`)
  try {
    return await (await backendDefinition(b.type, `${where}.type`)).open(b, env, baseDir)
  } catch (err) {
    throw rekeyed(err, where)
  }
}

/** What was mounted, without secrets; relative paths of this machine shown from `baseDir` when given. */
export async function describeBackend(b: BackendConfig, baseDir?: string): Promise<string> {
  if (b.type === 'module') return `module ${baseDir === undefined ? (b['module'] as string) : resolve(baseDir, b['module'] as string)}`
  return (await backendDefinition(b.type, 'backend.type')).describe(b, baseDir)
}

/** The config's `sandbox` block over the defaults: workspace-write on the backend's root, reads confined. */
export function harnessSandbox(config: HarnessConfig): HarnessSandbox {
  const s = config.sandbox
  return {
    mode: s?.mode ?? 'workspace-write',
    workspaceRoot: s?.workspaceRoot ?? '.',
    confineReads: s?.confineReads ?? true,
    ...(s?.writableRoots === undefined ? {} : { writableRoots: s.writableRoots }),
  }
}

/** The fence, in words: `workspace-write in the root, reads confined to it`. */
function describeSandbox(s: HarnessSandbox): string {
  if (s.mode === 'full-access') return 'full-access: reads and writes anywhere the backend reaches'
  const roots = [s.workspaceRoot === '.' ? 'the root' : s.workspaceRoot, ...(s.writableRoots ?? [])]
  const reads = s.confineReads ? `reads confined to ${s.mode === 'read-only' ? roots.join(', ') : roots.length === 1 ? 'it' : 'them'}` : 'reads anywhere'
  return `${s.mode === 'read-only' ? 'read-only' : `workspace-write in ${roots.join(', ')}`}, ${reads}`
}

/**
 * Mounts what `config` says: the backend, the sandbox around it, the policy
 * and the tools. Throws {@link ConfigError} for anything wrong in the config.
 *
 * Safe by default: the backend's root is a fence on every backend. Without a `sandbox` block the
 * model gets `workspace-write` on the root with reads confined to it; widening is explicit
 * (`"sandbox": { "mode": "full-access" }`, `"confineReads": false`, `writableRoots`). Whatever the
 * mode, {@link PROTECTED_NAMES} (`.git`, `node_modules`, package-manager config, `.husky`, any
 * {@link CONFIG_FILE}), git repositories by kind, the module the
 * config names, the code the next start runs ({@link harnessCodePaths}) and `options.protect` are
 * read-only to the model. A JavaScript config's own imports are not known here: keep such a config
 * (and what it imports) outside the served root, or use JSON. The sandbox's paths (`workspaceRoot`, `writableRoots`) and `cwd` are
 * paths of the store, relative to the backend's root.
 *
 * With `mounts`, each backend is opened as `backend` would be (a failure closes those already
 * open), they are composed in a `MountFileSystem`, and everything above is about that tree: the
 * workspace is its `/`, the paths are paths of the tree, and the protected files of this machine
 * are protected under every local (or module) mount whose root holds them. A read-only mount that a
 * writable mount of this machine's disk reaches (their roots nest) is a ConfigError; one that a
 * writable mount may reach (one server or bucket, an SFTP server that may be this machine) is a
 * `warnings` entry.
 */
export async function loadHarness(rawConfig: unknown, options: LoadOptions = {}): Promise<Harness> {
  const validated = await validateConfig(rawConfig)
  const baseDir = resolve(options.baseDir ?? process.cwd())
  // `paths: 'workspace'`: the backend as the one mount at `/`, so the model sees paths of that tree.
  const { backend: single, ...settings } = validated
  const config: HarnessConfig = validated.paths === 'workspace' && single !== undefined ? { ...settings, mounts: { '/': single } } : validated
  // Where the store's paths are a tree's (`mounts`, or `paths: 'workspace'`), the local disk's mounts,
  // by point and host root: an MCP client's roots, host paths, are seen through them.
  const hostMounts: (readonly [point: string, hostRoot: string])[] | undefined =
    config.mounts === undefined
      ? undefined
      : Object.entries(config.mounts).flatMap(([point, b]) => (b.type === 'local' ? [[point, resolve(baseDir, b['root'] as string)] as const] : []))
  const env = options.env ?? process.env
  const configs = config.mounts === undefined ? [config.backend] : Object.values(config.mounts)
  const hostFiles = [
    ...(options.protect ?? []),
    ...configs.flatMap((b) => (b.type === 'module' ? [b['module'] as string] : [])),
    ...harnessCodePaths(configs.some((b) => b.type === 'local') ? '@seamfs/backend-local' : undefined),
    // The audit trail is never the model's to change (or to remove, to hide what it did).
    ...(config.audit === undefined ? [] : auditLogFiles(config.audit.path, config.audit.keep)),
    // Nor are the overlay's changes, whose commit a person decides.
    ...(config.overlay === undefined ? [] : [config.overlay.dir]),
  ].map((file) => resolve(baseDir, file))
  const sandbox = harnessSandbox(config)
  let backend: FileSystem
  let protectedPaths: string[]
  let warnings: string[] = []
  if (config.mounts === undefined) {
    backend = await mountBackend(config.backend, baseDir, env)
    // Host paths mean something only where the backend is this machine's disk (local, or a module's).
    protectedPaths = config.backend.type === 'local' || config.backend.type === 'module' ? hostFiles : []
  } else {
    ;({ fs: backend, protectedPaths, warnings } = await openMounts(config.mounts, { baseDir, env, hostFiles, open: mountBackend }))
  }
  try {
    await assertRootThere(backend, sandbox)
    const served =
      config === validated || single === undefined ? await describeStores(config, baseDir) : `${await describeBackend(single, baseDir)}, shown as /`
    const audit = config.audit === undefined ? undefined : new AuditLog(resolve(baseDir, config.audit.path), config.audit)
    try {
      const overlayDir = config.overlay === undefined ? undefined : resolve(baseDir, config.overlay.dir)
      // With an audit log, what a commit writes to the store is a line too (the overlay's own changes are, above the fence).
      const overlayLower = audit === undefined ? backend : watchedBy(backend, audit)
      const overlay = overlayDir === undefined ? undefined : { fs: await openOverlay(overlayLower, overlayDir), dir: overlayDir }
      return await harnessOver(config, overlay?.fs ?? backend, sandbox, protectedPaths, served, warnings, hostMounts, audit, overlay)
    } catch (err) {
      audit?.close()
      throw err
    }
  } catch (err) {
    await backend.close().catch(() => undefined)
    throw err
  }
}

/** `inner` with each change (and each refused one) told to `audit`. */
function watchedBy(inner: FileSystem, audit: AuditLog): FileSystem {
  const evented = new EventedFileSystem(inner)
  evented.on(audit.listener)
  return evented
}

/** The overlay over `backend` whose changes are kept in `dir`, a directory of this machine (made if missing). */
async function openOverlay(backend: FileSystem, dir: string): Promise<OverlayFileSystem> {
  // The changes live on this machine's disk: the local backend (an optional peer) keeps them.
  let local: typeof import('@seamfs/backend-local')
  try {
    local = await import('@seamfs/backend-local')
  } catch (err) {
    throw new ConfigError('overlay', 'the package @seamfs/backend-local installed (the overlay keeps its changes on this disk)', (err as Error).message)
  }
  try {
    mkdirSync(dir, { recursive: true })
    return await OverlayFileSystem.open(backend, { upper: { fs: new local.LocalFileSystem({ cwd: dir }), dir } })
  } catch (err) {
    throw new ConfigError('overlay.dir', 'a directory of this machine where the overlay keeps its changes', `${dir} (${(err as Error).message})`)
  }
}

/**
 * A workspace root that is surely not there is a config error now, not a fence that denies every
 * path as "outside the sandbox roots". Only where directories exist on their own (an S3 prefix
 * exists once written to); a store that cannot be asked now (a server down) is not judged here.
 */
async function assertRootThere(backend: FileSystem, sandbox: HarnessSandbox): Promise<void> {
  if (!backend.capabilities.emptyDirectories) return
  let missing: string
  try {
    const root = await backend.resolve(sandbox.workspaceRoot)
    if ((await backend.stat(root)) !== undefined) return
    missing = root.displayPath
  } catch (err) {
    // A root the store cannot even resolve because it is not there (an SFTP root's realpath).
    if (!isFsError(err, 'FS_NOT_FOUND') || err.path === undefined) return
    missing = err.path
  }
  const where = sandbox.workspaceRoot === '.' ? 'backend.root' : 'sandbox.workspaceRoot'
  throw new ConfigError(where, 'an existing directory', new Found(`"${missing}", which does not exist`))
}

/** What is served, without secrets: the backend, or each mount. */
async function describeStores(config: HarnessConfig, baseDir: string): Promise<string> {
  return config.mounts === undefined ? describeBackend(config.backend, baseDir) : describeMounts(config.mounts, (b) => describeBackend(b, baseDir))
}

/**
 * `path` of this machine as a path of the tree, through the local mount whose host root holds it
 * (by real path too, so a link on the way does not hide it; the deepest mount first); `undefined`
 * when none does: the client named a place this tree does not show.
 */
function treePath(mounts: readonly (readonly [point: string, hostRoot: string])[], path: string): string | undefined {
  const real = (p: string): string => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  const deepest = [...mounts].sort((a, b) => b[1].length - a[1].length)
  for (const view of [resolve, real]) {
    for (const [point, hostRoot] of deepest) {
      const rest = relative(view(hostRoot), view(path))
      if (rest === '' || (!rest.startsWith('..') && !isAbsolute(rest))) {
        const below = rest === '' ? [] : rest.split(sep)
        return posix.join(point, ...below)
      }
    }
  }
  return undefined
}

/**
 * What wraps a store in a `TracedFileSystem`: `@seamfs/core/opentelemetry` needs `@opentelemetry/api`,
 * an optional peer, so it is loaded only when tracing is asked for, and its absence is a config error.
 */
async function tracedLayer(): Promise<{ wrap: (inner: FileSystem) => FileSystem; flush: () => Promise<void> }> {
  let loaded: typeof import('@seamfs/core/opentelemetry')
  try {
    loaded = await import('@seamfs/core/opentelemetry')
  } catch (err) {
    throw new ConfigError('tracing', 'the package @opentelemetry/api installed next to @seamfs/core (npm install @opentelemetry/api)', (err as Error).message)
  }
  return { wrap: (inner) => new loaded.TracedFileSystem(inner), flush: loaded.flushTelemetry }
}

/** The sandbox, the policy and the tools over an open store. */
async function harnessOver(
  config: HarnessConfig,
  backend: FileSystem,
  sandbox: HarnessSandbox,
  protectedPaths: readonly string[],
  served: string,
  warnings: readonly string[],
  hostMounts: readonly (readonly [point: string, hostRoot: string])[] | undefined,
  audit: AuditLog | undefined,
  overlay: { readonly fs: OverlayFileSystem; readonly dir: string } | undefined,
): Promise<Harness> {
  const sandboxed = new SandboxedFileSystem(backend, { ...sandbox, protectedPaths, protectedNames: PROTECTED_NAMES })
  // With an audit log, every call goes through one layer of events outside the fence: its refusals are lines too.
  const audited = (inner: FileSystem): FileSystem => (audit === undefined ? inner : watchedBy(inner, audit))
  // With tracing, one traced layer outside everything: the fence's refusals are spans too, and the tools find it.
  const tracing = config.tracing === true ? await tracedLayer() : undefined
  const traced = tracing?.wrap ?? ((inner: FileSystem): FileSystem => inner)
  const fs = traced(audited(sandboxed))
  const policy = config.policy === false ? undefined : new ObservationPolicy()
  let tools: FileTool[]
  try {
    tools = createFileTools({ fs, policy, cwd: config.cwd, config: config.tools })
  } catch (err) {
    throw new ConfigError('tools', 'valid tool settings', (err as Error).message)
  }
  return {
    config,
    description: `${served}${overlay === undefined ? '' : ` under an overlay (changes kept in ${overlay.dir} until committed)`}; ${describeSandbox(sandbox)}; read-before-write ${policy === undefined ? 'off' : 'on'}${audit === undefined ? '' : `; audit log ${audit.path}`}${config.tracing === true ? '; tracing on' : ''}`,
    warnings,
    sandbox,
    backend,
    overlay: overlay?.fs,
    fs,
    policy,
    tools,
    tool(name) {
      const tool = tools.find((t) => t.name === name)
      if (tool === undefined) throw new Error(`no tool named ${name}`)
      return tool
    },
    toolsWithin(hostRoots) {
      // In a tree (mounts, `paths: 'workspace'`), a client's root is a host path: seen through the local
      // mounts; one no mount shows reaches nothing, and roots that all reach nothing serve nothing.
      const roots = hostMounts === undefined ? hostRoots : hostRoots.flatMap((root) => treePath(hostMounts, root) ?? [])
      if (roots.length === 0 && hostRoots.length > 0) {
        throw new Error(`none of the roots the client lists is in what this server serves (${hostMounts?.map(([point]) => point).join(', ') ?? ''})`)
      }
      const [workspaceRoot, ...writableRoots] = roots
      if (workspaceRoot === undefined) return tools
      const mode = sandbox.mode === 'full-access' ? 'workspace-write' : sandbox.mode
      // The inner fence keeps its protected paths and names; this one only narrows where calls may go.
      const within = new SandboxedFileSystem(sandboxed, {
        mode,
        workspaceRoot,
        writableRoots,
        confineReads: true,
        protectedNames: [],
        protectExecutables: false,
      })
      return createFileTools({ fs: traced(audited(within)), policy, config: config.tools })
    },
    close: async () => {
      try {
        await fs.close()
      } finally {
        audit?.close()
        // A batching span processor or a periodic metric reader holds what the last calls recorded: out before the process ends.
        await tracing?.flush()
      }
    },
  }
}

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)
