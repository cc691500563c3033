import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { Found } from '@seamfs/core/backend'
import { actingAs, type ObservationPolicy } from '@seamfs/core'
import type { McpRoot } from '@seamfs/mcp'
import type { FileTool, OverlayFileSystem, ToolResult } from '@seamfs/tools'
import {
  ConfigError,
  isConfigError,
  MODULE_FILE,
  OVERLAY_DIR,
  mountKey,
  parseFsUrl,
  PATHS_VIEWS,
  validateConfig,
  type BackendConfig,
  type HarnessConfig,
  type PathsView,
} from './config.js'
import { changeJson, changeText, reportJson, reportText } from './overlay-output.js'
import { isMissingPackage } from './backends.js'
import { CONFIG_FILE, loadHarness, type Harness } from './harness.js'

import { paintFor, type Io, type Paint } from './io.js'

export type { Io }
export { CONFIG_FILE }

/** The kit and its peers: `seamfs conformance` names the one missing. */
const KIT_PACKAGES = ['@seamfs/conformance', 'vitest', 'fast-check']

const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version

const EXAMPLES = `
Examples:
  seamfs ls                                   list the working directory
  seamfs read notes.txt --offset 10 --limit 20
  echo hello | seamfs write hello.txt         content comes from stdin
  seamfs edit hello.txt --old hello --new bye
  seamfs grep TODO src --include '*.ts'
  seamfs --fs memory: ls                      another backend, just for this command
  seamfs --session .seamfs-session.json read f.txt
                                              later writes with the same --session
                                              refuse to clobber what was not read
  seamfs conformance --builtin                the conformance kit on memory and local
  seamfs read f.txt --json                    the tool's result as one JSON object
  seamfs grep -i -q todo                      case-insensitive; no serving line
  seamfs mcp                                  the tools as an MCP server on stdio
  seamfs --session s.json mcp                 the same, its reads kept across connections

Exit codes: 0 done, 1 a tool call failed (Error: ... [CODE] on stderr),
2 a config or usage error.
`

interface GlobalOptions {
  readonly config?: string
  readonly fs?: string
  readonly session?: string
  readonly allowModule?: boolean
  /** False with `--no-color`. */
  readonly color?: boolean
  /** `--paths`: over the config's `paths`. */
  readonly paths?: PathsView
  /** `--audit <file>`: over the config's `audit` path. */
  readonly audit?: string
  /** `--trace`: the config's `tracing` on. */
  readonly trace?: boolean
  /** `--overlay`: the config's `overlay` on (its own directory, or the default one). */
  readonly overlay?: boolean
}

const pathsView = (value: string): PathsView => {
  if (!(PATHS_VIEWS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${PATHS_VIEWS.join(', ')}`)
  return value as PathsView
}

/** A config as read by the CLI, with where it came from. */
export interface LoadedConfig {
  readonly config: HarnessConfig
  /** Where the backends' relative paths of this machine start: the config file's directory, or the cwd for `--fs` and the default. */
  readonly baseDir: string
  /** The config file in use (absolute), if any. */
  readonly file?: string | undefined
}

const positiveInt = (value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer')
  return n
}

/** Seconds on the command line, as milliseconds. */
const positiveSeconds = (value: string): number => {
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of seconds')
  return Math.round(n * 1000)
}

interface ConformanceCommandOptions {
  readonly builtin: boolean
  readonly json?: string
  readonly timeout?: number
  readonly runTimeout?: number
  readonly thorough: boolean
  readonly seed?: number
  readonly quiet: boolean
}

/** `--seed`: an integer fast-check takes (a 32-bit signed one); the same rule as seamfs-conformance's. */
const seedArgument = (value: string): number => {
  const n = Number(value)
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new InvalidArgumentError('expected an integer from -2147483648 to 2147483647')
  }
  return n
}

/**
 * The config: `--config FILE`, else ./seamfs.config.json, else the local disk at the cwd; `--fs`
 * replaces the backend (or the mounts) with one backend. Paths written in a config file start at that file's directory; paths on the
 * command line (`--config`, `--fs`, `--session`) at the cwd. A JSON config cannot load code by
 * itself: a `module` backend in one needs `--allow-module` (a flag the model cannot write into a file).
 */
export async function readConfig(options: GlobalOptions, io: Io): Promise<LoadedConfig> {
  let raw: unknown
  const named = options.config ?? (existsSync(resolve(io.cwd, CONFIG_FILE)) ? CONFIG_FILE : undefined)
  const file = named === undefined ? undefined : resolve(io.cwd, named)
  const isModule = named !== undefined && MODULE_FILE.test(named)
  if (file === undefined) raw = { backend: { type: 'local', root: '.' } }
  else if (isModule) {
    try {
      raw = ((await import(pathToFileURL(file).href)) as { default?: unknown }).default
    } catch (err) {
      throw new ConfigError('--config', 'a config module that can be imported (.ts needs Node ≥ 22.6 or a loader)', `${named} (${(err as Error).message})`)
    }
  } else {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      throw new ConfigError('--config', 'a readable config file', named)
    }
    try {
      raw = JSON.parse(text) as unknown
    } catch (err) {
      throw new ConfigError(named ?? CONFIG_FILE, 'valid JSON', (err as Error).message)
    }
  }
  const validated = await validateConfig(raw)
  const viewed = options.paths === undefined ? validated : { ...validated, paths: options.paths }
  // --audit on the command line: a path from the cwd, over the config's own.
  const audited = options.audit === undefined ? viewed : { ...viewed, audit: { ...viewed.audit, path: resolve(io.cwd, options.audit) } }
  const traced = options.trace === true ? { ...audited, tracing: true } : audited
  const config = options.overlay === true ? { ...traced, overlay: traced.overlay ?? { dir: OVERLAY_DIR } } : traced
  if (options.fs !== undefined) {
    // --fs mounts one backend, in place of the config's backend or mounts.
    const { backend: _backend, mounts: _mounts, ...settings } = config
    return { config: { ...settings, backend: await parseFsUrl(options.fs) }, baseDir: io.cwd, file }
  }
  const stores: Array<[key: string, backend: BackendConfig]> =
    config.mounts === undefined ? [['backend', config.backend]] : Object.entries(config.mounts).map(([point, b]) => [mountKey(point), b])
  const module = stores.find(([, b]) => b.type === 'module')
  if (module !== undefined && !isModule && options.allowModule !== true) {
    throw new ConfigError(
      `${module[0]}.module`,
      'a module named on the command line (--fs ./backend.js), or --allow-module: a JSON config does not load code by itself',
      new Found(`a module in ${named ?? CONFIG_FILE}`),
    )
  }
  return { config, baseDir: file === undefined ? io.cwd : dirname(file), file }
}

/**
 * Mounts what the global options say; says on stderr, in one line, what it serves and how it is
 * fenced (not with `--quiet`), then any warning, a line each (always: a widened fence stays visible).
 */
async function mount(options: GlobalOptions & OutputOptions, io: Io, paint: Paint, override?: (config: HarnessConfig) => HarnessConfig): Promise<Harness> {
  const { config, baseDir, file } = await readConfig(options, io)
  const protect = [file, options.session === undefined ? undefined : resolve(io.cwd, options.session)].filter((f): f is string => f !== undefined)
  const harness = await loadHarness(override === undefined ? config : override(config), { baseDir, env: io.env, protect })
  if (options.quiet !== true) io.stderr(paint.quiet(`seamfs: serving ${harness.description}`) + '\n')
  for (const warning of harness.warnings) io.stderr(paint.warning(`seamfs: warning: ${warning}`) + '\n')
  return harness
}

/** What a tool command and `mcp` take about their output. */
interface OutputOptions {
  readonly json?: boolean
  readonly quiet?: boolean
}

const jsonOption = (): Option => new Option('--json', "print the tool's result as one JSON object on stdout (failures too; the exit code still says which)")
const quietOption = (): Option => new Option('-q, --quiet', 'no serving line on stderr (warnings still print)')

/** Who an audit log says made the changes of `seamfs commit`. */
const COMMIT_ACTOR = 'seamfs commit'

/** The policy session of the CLI's calls, kept in the `--session` file. */
const CLI_SESSION = 'cli'

/**
 * The `--session` file: the observations restored from it before the calls, and saved to it after
 * each (whole, through a rename: a reader never sees half a file). Two processes saving one file at
 * once keep the last one's record.
 */
function sessionFile(io: Io, file: string | undefined, policy: ObservationPolicy | undefined): { readonly save: () => void } {
  if (file === undefined || policy === undefined) return { save: () => undefined }
  const path = resolve(io.cwd, file)
  if (existsSync(path)) policy.restore(CLI_SESSION, JSON.parse(readFileSync(path, 'utf8')) as unknown)
  return {
    save: () => {
      const staged = `${path}.${process.pid}.tmp`
      writeFileSync(staged, `${JSON.stringify(policy.snapshot(CLI_SESSION))}\n`)
      renameSync(staged, path)
    },
  }
}

/**
 * A tool's result as one JSON object (`--json`): `isError`, the model's `text`, the failure's
 * `code`, `retryable` and `indeterminate`, and a success's structured `value` where the tool has
 * one (bounded as the text is); an image by its type and size, not its bytes.
 */
function resultJson(tool: FileTool, result: ToolResult): string {
  const value = !result.isError && result.value !== undefined && tool.structured !== undefined ? tool.structured.content(result.value) : undefined
  return JSON.stringify({
    tool: tool.name,
    isError: result.isError,
    text: result.text,
    ...(result.code === undefined ? {} : { code: result.code }),
    ...(result.retryable === undefined ? {} : { retryable: result.retryable }),
    ...(result.indeterminate === undefined ? {} : { indeterminate: result.indeterminate }),
    ...(value === undefined ? {} : { value }),
    ...(result.image === undefined ? {} : { image: { mimeType: result.image.mimeType, base64Length: result.image.data.length } }),
  })
}

/** Builds the `seamfs` program; `run` parses argv and resolves to the exit code. */
export function buildProgram(io: Io): { program: Command; exit: () => number } {
  let exitCode = 0
  const program = new Command('seamfs')
    .description('One filesystem contract for agents: the tools, the conformance kit and an MCP server over any backend.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('-c, --config <file>', `harness config (default: ./${CONFIG_FILE} when present, else the local disk here, confined to it)`)
    .option('--fs <spec>', 'backend override: file:<dir> | memory: | s3://bucket/prefix?endpoint=… | sftp://user@host:port/path | <module.js>')
    .option('--session <file>', 'keep read-before-write observations in this file across commands (default: no policy for one-shot commands)')
    .option('--allow-module', 'let a JSON config name a backend module (code) to load')
    .option('--paths <view>', "what paths the model sees: store (the store's own; host paths on local and SFTP) or workspace (the root as /)", pathsView)
    .option('--audit <file>', 'append one JSON line per change the tools make (and per one refused) to this file, which the model cannot touch')
    .option('--overlay', `the model works on an overlay: nothing reaches the store until \`seamfs commit\` (changes kept in ./${OVERLAY_DIR})`)
    .option(
      '--trace',
      'OpenTelemetry spans and metrics of every call, to the SDK the process registers (node --import ./otel-setup.js); needs @opentelemetry/api',
    )
    .option('--no-color', 'no colour on stderr (also NO_COLOR=1; colour is only ever used on a terminal)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXAMPLES)

  const paint = (): Paint => paintFor(io, program.opts<GlobalOptions>().color !== false)
  // The options of the subcommand running (`--json`, `-q`): theirs, not the program's, so that
  // `seamfs conformance --json <file> --quiet` keeps its own.
  let output: OutputOptions = {}
  program.hook('preAction', (_program, action) => {
    output = action.opts<OutputOptions>()
  })

  /** Mounts the harness for a one-shot tool command, runs it, prints the tool's own text (or, with `--json`, its result). */
  const toolCommand = async (name: string, args: Record<string, unknown>): Promise<void> => {
    const options = program.opts<GlobalOptions>()
    const harness = await mount({ ...options, ...output }, io, paint(), options.session === undefined ? (config) => ({ ...config, policy: false }) : undefined)
    try {
      const session = sessionFile(io, options.session, harness.policy)
      const tool = harness.tool(name)
      const result = await tool.execute(args, { session: CLI_SESSION })
      session.save()
      if (result.isError) exitCode = 1
      if (output.json === true) io.stdout(`${resultJson(tool, result)}\n`)
      else if (result.isError) io.stderr(paint().error(`${result.text}${result.code === undefined ? '' : ` [${result.code}]`}`) + '\n')
      else io.stdout(`${result.text}\n`)
    } finally {
      await harness.close()
    }
  }

  program
    .command('ls')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('list a directory (the list tool)')
    .argument('[path]', 'directory, default the workspace')
    .option('--offset <n>', '1-based first entry', positiveInt)
    .option('-l, --details', "each entry's size and modification time", false)
    .action((path: string | undefined, o: { offset?: number; details: boolean }) => toolCommand('list', { path, offset: o.offset, details: o.details }))
  program
    .command('tree')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('a directory tree (the tree tool)')
    .argument('[path]', 'directory, default the workspace')
    .option('--depth <n>', 'levels shown (1 to 20, default 3)', positiveInt)
    .action((path: string | undefined, o: { depth?: number }) => toolCommand('tree', { path, depth: o.depth }))
  program
    .command('info')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description("a path's type, size and modification time (the info tool)")
    .argument('<path>')
    .action((path: string) => toolCommand('info', { path }))
  program
    .command('read')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('read a text file with line numbers (the read tool)')
    .argument('<file>')
    .option('--offset <n>', '1-based first line', positiveInt)
    .option('--limit <n>', 'number of lines', positiveInt)
    .action((file: string, o: { offset?: number; limit?: number }) => toolCommand('read', { file_path: file, offset: o.offset, limit: o.limit }))
  program
    .command('write')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('create or replace a file with the text on stdin (the write tool)')
    .argument('<file>')
    .action(async (file: string) => toolCommand('write', { file_path: file, content: await io.stdin() }))
  program
    .command('edit')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('replace literal text in a file (the edit tool)')
    .argument('<file>')
    .requiredOption('--old <text>', 'literal text to replace')
    .requiredOption('--new <text>', 'replacement text')
    .option('--all', 'replace every match', false)
    .action((file: string, o: { old: string; new: string; all: boolean }) =>
      toolCommand('edit', { file_path: file, old_string: o.old, new_string: o.new, replace_all: o.all }),
    )
  program
    .command('rm')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('delete a file or an empty directory (the delete tool)')
    .argument('<path>')
    .action((path: string) => toolCommand('delete', { path }))
  program
    .command('mv')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('move a file or directory (the move tool); like write, it replaces an existing file unless --session asks for a read first')
    .argument('<source>')
    .argument('<destination>')
    .action((source: string, destination: string) => toolCommand('move', { source_path: source, destination_path: destination }))
  program
    .command('mkdir')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('create a directory and its missing parents (the create_directory tool)')
    .argument('<path>')
    .action((path: string) => toolCommand('create_directory', { path }))
  program
    .command('glob')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('find files by glob pattern (the glob tool)')
    .argument('<pattern>')
    .argument('[path]')
    .option('--include-ignored', 'also search what .gitignore and .ignore files exclude', false)
    .action((pattern: string, path: string | undefined, o: { includeIgnored: boolean }) =>
      toolCommand('glob', { pattern, path, include_ignored: o.includeIgnored }),
    )
  program
    .command('grep')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('search file contents by regular expression (the grep tool)')
    .argument('<pattern>')
    .argument('[path]')
    .option('--include <glob>', 'only files matching this glob')
    .option('-i, --ignore-case', 'match letters in either case', false)
    .option('--include-ignored', 'also search what .gitignore and .ignore files exclude', false)
    .action((pattern: string, path: string | undefined, o: { include?: string; ignoreCase: boolean; includeIgnored: boolean }) =>
      toolCommand('grep', { pattern, path, include: o.include, ignore_case: o.ignoreCase, include_ignored: o.includeIgnored }),
    )
  program
    .command('conformance')
    .description('run the conformance kit and print a per-clause report')
    .argument('[module]', 'a module exporting conformance options (a factory), .js or .ts; default: --builtin')
    .option('--builtin', 'run the kit on the embedded backends (memory, and local in a temporary directory); what `npm start` does', false)
    .option('--json <file>', 'also write the report as JSON')
    .option(
      '--timeout <seconds>',
      "per-test timeout (default: the module's options.timeoutMs, else 60); a backend that never returns control gets the test worker killed",
      positiveSeconds,
    )
    .option(
      '--run-timeout <seconds>',
      'limit of each run (default: 10 min, or 10 x --timeout if more); past it the worker is killed and unfinished tests fail',
      positiveSeconds,
    )
    .option('--thorough', "ten times the runs of the model-based and generative tests (for a release; CI keeps the module's counts and seed)", false)
    .option('--seed <n>', 'the seed of the model-based and generative tests (a failure prints the one to replay)', seedArgument)
    .option('--quiet', 'no per-test progress', false)
    .action(async (module: string | undefined, o: ConformanceCommandOptions, command: Command) => {
      // The kit needs a factory of fresh filesystems and hooks that write behind their back: a module, not a mount.
      if (program.opts<GlobalOptions>().fs !== undefined && module === undefined && !o.builtin) {
        command.error('error: conformance runs on a module exporting conformance options, or --builtin; not on --fs', { exitCode: 2 })
      }
      if (module !== undefined && o.builtin) command.error('error: give a module or --builtin, not both', { exitCode: 2 })
      if (module !== undefined && !existsSync(resolve(io.cwd, module))) command.error(`error: no module at ${module}`, { exitCode: 2 })
      const progress = o.quiet ? undefined : io.stderr
      const limits = { timeoutMs: o.timeout, runTimeoutMs: o.runTimeout, thorough: o.thorough, seed: o.seed, live: io.stderrIsTTY === true }
      // Loaded here: the kit (an optional peer) brings vitest, which the other commands do not need.
      const kit = await import('./conformance.js').catch((err: unknown) => {
        const missing = KIT_PACKAGES.find((pkg) => isMissingPackage(err, pkg))
        if (missing === undefined) throw err
        return command.error(`error: seamfs conformance needs the package ${missing}: npm install @seamfs/conformance (it brings vitest and fast-check)`, {
          exitCode: 2,
        })
      })
      const { missingBuiltin, runBuiltinConformance, runModuleConformance } = kit
      const builtinMissing = o.builtin || module === undefined ? missingBuiltin() : undefined
      if (builtinMissing !== undefined)
        command.error(`error: seamfs conformance --builtin needs the package ${builtinMissing}: npm install ${builtinMissing}`, { exitCode: 2 })
      const failed =
        o.builtin || module === undefined
          ? await runBuiltinConformance({ io, progress, json: o.json, ...limits, fs: o.builtin ? undefined : program.opts<GlobalOptions>().fs })
          : await runModuleConformance({ io, progress, json: o.json, ...limits, module: resolve(io.cwd, module) })
      if (failed) exitCode = 1
    })
  /** Mounts the harness for an overlay command: one with no overlay configured is a usage error. */
  const overlayCommand = async (run: (overlay: OverlayFileSystem, json: boolean) => Promise<void>): Promise<void> => {
    const options = program.opts<GlobalOptions>()
    const harness = await mount({ ...options, ...output }, io, paint(), (config) => ({ ...config, policy: false }))
    try {
      if (harness.overlay === undefined) {
        io.stderr(paint().error('seamfs: no overlay: set "overlay": true in the config, or pass --overlay') + '\n')
        exitCode = 2
        return
      }
      await run(harness.overlay, output.json === true)
    } finally {
      await harness.close()
    }
  }
  const paths = (given: readonly string[]): { paths?: readonly string[] } => (given.length === 0 ? {} : { paths: given })

  program
    .command('changes')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description('what the model changed on the overlay, not yet in the store: each path, its kind and its diff')
    .argument('[paths...]', 'only these paths and what is below them')
    .action((given: string[]) =>
      overlayCommand(async (overlay, json) => {
        const changes = await overlay.changes(paths(given))
        if (json) io.stdout(`${JSON.stringify({ changes: changes.map(changeJson) })}\n`)
        else io.stdout(changes.length === 0 ? 'No changes.\n' : `${changes.map((c) => changeText(c, paint())).join('\n')}\n`)
      }),
    )
  program
    .command('commit')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description("apply the overlay's changes to the store, each guarded by the version it was based on")
    .argument('[paths...]', 'only these paths and what is below them (with the directories they need)')
    .action((given: string[]) =>
      overlayCommand(async (overlay, json) => {
        // The commit's writes name the person's command, not the model's session, in an audit log.
        const report = await actingAs(COMMIT_ACTOR, () => overlay.commit(paths(given)))
        if (report.outcome !== 'committed') exitCode = 1
        if (json) io.stdout(`${JSON.stringify(reportJson(report))}\n`)
        else (report.outcome === 'committed' ? io.stdout : io.stderr)(`${reportText(report)}\n`)
      }),
    )
  program
    .command('discard')
    .addOption(jsonOption())
    .addOption(quietOption())
    .description("drop the overlay's changes: the model sees the store again")
    .argument('[paths...]', 'only these paths and what is below them')
    .action((given: string[]) =>
      overlayCommand(async (overlay, json) => {
        const dropped = await overlay.discard(paths(given))
        io.stdout(json ? `${JSON.stringify({ discarded: dropped })}\n` : `Discarded ${dropped} change${dropped === 1 ? '' : 's'}.\n`)
      }),
    )
  program
    .command('mcp')
    .addOption(quietOption())
    .description('serve the tools over MCP on stdio, for an MCP client')
    .action(async () => {
      const options = program.opts<GlobalOptions>()
      const harness: Harness = await mount({ ...options, ...output }, io, paint())
      const { createMcpServer, serveStdio } = await import('@seamfs/mcp')
      try {
        // With --session, every connection shares the file's record, saved after each call: a client
        // that starts one server per call still edits what an earlier call read.
        const session = sessionFile(io, options.session, harness.policy)
        const saving = (tools: readonly FileTool[]): FileTool[] =>
          options.session === undefined
            ? [...tools]
            : tools.map((tool): FileTool => ({
                ...tool,
                execute: async (args, context) => {
                  try {
                    return await tool.execute(args, context)
                  } finally {
                    session.save()
                  }
                },
              }))
        const shared = options.session === undefined ? {} : { session: CLI_SESSION }
        // A client that lists its roots narrows the fence to them (the MCP roots protocol).
        const roots = { within: (listed: readonly McpRoot[]) => saving(harness.toolsWithin(listed.map((root) => root.path))) }
        await serveStdio(createMcpServer({ tools: saving(harness.tools), name: 'seamfs', version: VERSION, roots, ...shared }))
      } finally {
        await harness.close()
      }
    })
  return { program, exit: () => exitCode }
}

/** Runs the CLI; resolves to the process exit code (2 for a config or usage error). */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  const { program, exit } = buildProgram(io)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return exit()
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    if (isConfigError(err)) {
      io.stderr(`seamfs: ${err.message}\n`)
      return 2
    }
    io.stderr(`seamfs: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}
