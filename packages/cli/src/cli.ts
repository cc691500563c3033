import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { ConfigError, isConfigError, parseFsUrl, validateConfig, type HarnessConfig } from './config.js'
import { isMissingPackage } from './backends.js'
import { loadHarness, type Harness } from './harness.js'

/** Where a command writes; tests pass their own. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly stdin: () => Promise<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
}

export const CONFIG_FILE = 'seamfs.config.json'

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
  seamfs mcp                                  the tools as an MCP server on stdio

Exit codes: 0 done, 1 a tool call failed (Error: ... [CODE] on stderr),
2 a config or usage error.
`

interface GlobalOptions {
  readonly config?: string
  readonly fs?: string
  readonly session?: string
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
  readonly quiet: boolean
}

/** The config: `--config FILE`, else ./seamfs.config.json, else the local disk at the cwd; `--fs` replaces the backend. */
export async function readConfig(options: GlobalOptions, io: Io): Promise<HarnessConfig> {
  let raw: unknown
  const file = options.config ?? (existsSync(resolve(io.cwd, CONFIG_FILE)) ? CONFIG_FILE : undefined)
  if (file === undefined) raw = { backend: { type: 'local', root: '.' } }
  else if (/\.(m?js|ts)$/.test(file)) {
    const mod = (await import(pathToFileURL(resolve(io.cwd, file)).href)) as { default?: unknown }
    raw = mod.default
  } else {
    let text: string
    try {
      text = readFileSync(resolve(io.cwd, file), 'utf8')
    } catch {
      throw new ConfigError('--config', 'a readable config file', file)
    }
    try {
      raw = JSON.parse(text) as unknown
    } catch (err) {
      throw new ConfigError(file, 'valid JSON', (err as Error).message)
    }
  }
  const config = await validateConfig(raw)
  return options.fs === undefined ? config : { ...config, backend: await parseFsUrl(options.fs) }
}

/** Builds the `seamfs` program; `run` parses argv and resolves to the exit code. */
export function buildProgram(io: Io): { program: Command; exit: () => number } {
  let exitCode = 0
  const program = new Command('seamfs')
    .description('One filesystem contract for agents: the tools, the conformance kit and an MCP server over any backend.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('-c, --config <file>', `harness config (default: ./${CONFIG_FILE} when present, else the local disk here)`)
    .option('--fs <spec>', 'backend override: file:<dir> | memory: | s3://bucket/prefix?endpoint=… | sftp://user@host:port/path | <module.js>')
    .option('--session <file>', 'keep read-before-write observations in this file across commands (default: no policy for one-shot commands)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXAMPLES)

  /** Mounts the harness for a one-shot tool command, runs it, prints the tool's own text. */
  const toolCommand = async (name: string, args: Record<string, unknown>): Promise<void> => {
    const options = program.opts<GlobalOptions>()
    const config = await readConfig(options, io)
    const harness = await loadHarness(options.session === undefined ? { ...config, policy: false } : config, {
      baseDir: io.cwd,
      env: io.env,
    })
    try {
      const session = 'cli'
      if (options.session !== undefined && existsSync(resolve(io.cwd, options.session))) {
        harness.policy?.restore(session, JSON.parse(readFileSync(resolve(io.cwd, options.session), 'utf8')) as unknown)
      }
      const result = await harness.tool(name).execute(args, { session })
      if (options.session !== undefined && harness.policy !== undefined) {
        writeFileSync(resolve(io.cwd, options.session), `${JSON.stringify(harness.policy.snapshot(session))}\n`)
      }
      if (result.isError) {
        io.stderr(`${result.text}${result.code === undefined ? '' : ` [${result.code}]`}\n`)
        exitCode = 1
      } else {
        io.stdout(`${result.text}\n`)
      }
    } finally {
      await harness.close()
    }
  }

  program
    .command('ls')
    .description('list a directory (the list tool)')
    .argument('[path]', 'directory, default the workspace')
    .option('--offset <n>', '1-based first entry', positiveInt)
    .action((path: string | undefined, o: { offset?: number }) => toolCommand('list', { path, offset: o.offset }))
  program
    .command('read')
    .description('read a text file with line numbers (the read tool)')
    .argument('<file>')
    .option('--offset <n>', '1-based first line', positiveInt)
    .option('--limit <n>', 'number of lines', positiveInt)
    .action((file: string, o: { offset?: number; limit?: number }) => toolCommand('read', { file_path: file, offset: o.offset, limit: o.limit }))
  program
    .command('write')
    .description('create or replace a file with the text on stdin (the write tool)')
    .argument('<file>')
    .action(async (file: string) => toolCommand('write', { file_path: file, content: await io.stdin() }))
  program
    .command('edit')
    .description('replace literal text in a file (the edit tool)')
    .argument('<file>')
    .requiredOption('--old <text>', 'literal text to replace')
    .requiredOption('--new <text>', 'replacement text')
    .option('--all', 'replace every match', false)
    .action((file: string, o: { old: string; new: string; all: boolean }) =>
      toolCommand('edit', { file_path: file, old_string: o.old, new_string: o.new, replace_all: o.all }),
    )
  program
    .command('glob')
    .description('find files by glob pattern (the glob tool)')
    .argument('<pattern>')
    .argument('[path]')
    .action((pattern: string, path: string | undefined) => toolCommand('glob', { pattern, path }))
  program
    .command('grep')
    .description('search file contents by regular expression (the grep tool)')
    .argument('<pattern>')
    .argument('[path]')
    .option('--include <glob>', 'only files matching this glob')
    .action((pattern: string, path: string | undefined, o: { include?: string }) => toolCommand('grep', { pattern, path, include: o.include }))
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
    .option('--quiet', 'no per-test progress', false)
    .action(async (module: string | undefined, o: ConformanceCommandOptions, command: Command) => {
      // The kit needs a factory of fresh filesystems and hooks that write behind their back: a module, not a mount.
      if (program.opts<GlobalOptions>().fs !== undefined && module === undefined && !o.builtin) {
        command.error('error: conformance runs on a module exporting conformance options, or --builtin; not on --fs', { exitCode: 2 })
      }
      if (module !== undefined && o.builtin) command.error('error: give a module or --builtin, not both', { exitCode: 2 })
      if (module !== undefined && !existsSync(resolve(io.cwd, module))) command.error(`error: no module at ${module}`, { exitCode: 2 })
      const progress = o.quiet ? undefined : io.stderr
      const limits = { timeoutMs: o.timeout, runTimeoutMs: o.runTimeout }
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
  program
    .command('mcp')
    .description('serve the tools over MCP on stdio, for an MCP client')
    .action(async () => {
      const options = program.opts<GlobalOptions>()
      const harness: Harness = await loadHarness(await readConfig(options, io), { baseDir: io.cwd, env: io.env })
      const { createMcpServer, serveStdio } = await import('@seamfs/tools/mcp')
      try {
        await serveStdio(createMcpServer({ tools: harness.tools, name: 'seamfs', version: VERSION }))
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
