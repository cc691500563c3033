/**
 * The consumer smoke test: what a user gets from npm. `npm pack`s the publishable
 * workspace packages (their BUILT dist, which `npm test` makes first), installs the tarballs into
 * fresh temporary projects with plain `npm install`, as a user would, then runs an ESM consumer, a
 * CommonJS consumer and a strict type check against what was installed, and the CLI's bin.
 *
 * It prints the install figures (packages, size) and bounds them: `@seamfs/tools` must not drag in an
 * HTTP framework, a test runner or a cloud SDK. Network: only npm itself, to the registry, for the
 * third-party dependencies (`--prefer-offline`: nothing once the npm cache is warm, as in CI after
 * `npm ci`). Every run works in its own temporary directory, removed afterwards.
 */
import { spawn } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest'
import { REPO } from './support.js'

/** Installs from a cold npm cache download from the registry: allow for it. */
const TIMEOUT_MS = 240_000
const NPM_TIMEOUT_MS = 180_000

/**
 * The package-count bound of core + tools + memory, set a little above the measured figure so a minor
 * upgrade of memfs passes and a new heavy dependency does not. Measured once `@seamfs/tools` dropped the
 * MCP SDK: 35 packages, 10.2 MB (34 without `diff`): the 3 seamfs packages; memfs with its @jsonjoy.com
 * packages, tslib, thingies, tree-dump, hyperdyperid and glob-to-regex.js; minimatch with brace-expansion,
 * balanced-match and @isaacs/nonrecursive-glob-match. With the MCP SDK still in: 133 packages, 30.8 MB.
 */
const MAX_PACKAGES_CORE_TOOLS_MEMORY = 40

/** What a plain tools user must never install: HTTP frameworks, test runners, cloud SDKs, ssh2, the MCP SDK. */
const HEAVY =
  /^(express|hono|@hono\/.+|cors|koa|fastify|vitest|@vitest\/.+|vite|fast-check|jest|@jest\/.+|@aws-sdk\/.+|@smithy\/.+|ssh2|@modelcontextprotocol\/sdk)$/
/** What the CLI must never install: the conformance kit's test runner peers. */
const TEST_RUNNERS = /^(vitest|@vitest\/.+|vite|fast-check|jest|@jest\/.+)$/

interface Workspace {
  readonly dir: string
  readonly manifest: Manifest
}

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly exports?: unknown
  readonly bin?: string | Readonly<Record<string, string>>
  readonly dependencies?: Readonly<Record<string, string>>
  readonly peerDependencies?: Readonly<Record<string, string>>
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>
}

/** One entry of `npm pack --json`. */
interface Packed {
  readonly name: string
  readonly filename: string
  readonly files: readonly { readonly path: string }[]
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

interface Installed {
  /** Every installed package, by name, once per install location. */
  readonly names: readonly string[]
  readonly bytes: number
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T

/** The workspaces of the root package.json, keyed by package name. */
function workspaces(): ReadonlyMap<string, Workspace> {
  const globs = readJson<{ workspaces: string[] }>(join(REPO, 'package.json')).workspaces
  return new Map(
    globs.map((dir) => [readJson<Manifest>(join(REPO, dir, 'package.json')).name, { dir, manifest: readJson<Manifest>(join(REPO, dir, 'package.json')) }]),
  )
}

/** `names` and every workspace package they need in turn (dependencies and required peers). */
function closure(all: ReadonlyMap<string, Workspace>, names: readonly string[]): string[] {
  const out = new Set<string>()
  const visit = (name: string): void => {
    const ws = all.get(name)
    if (ws === undefined || out.has(name)) return
    out.add(name)
    const { dependencies = {}, peerDependencies = {}, peerDependenciesMeta = {} } = ws.manifest
    for (const dep of Object.keys(dependencies)) visit(dep)
    for (const peer of Object.keys(peerDependencies)) if (peerDependenciesMeta[peer]?.optional !== true) visit(peer)
  }
  names.forEach(visit)
  return [...out]
}

/** Every file path a manifest's `exports` and `bin` point at, relative to the package root. */
function targets(manifest: Manifest): string[] {
  const leaves = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.values(value).flatMap(leaves) : []
  const bin = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {})
  return [...leaves(manifest.exports), ...bin].map((path) => path.replace(/^\.\//, ''))
}

/**
 * The environment of a child npm: npm run scripts export their own config (`npm_config_local_prefix`
 * would point a nested `npm install` at the repo), so only the settings that reach the registry stay.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const keep =
    /^npm_config_(cache|cafile|ca|cert|key|registry|.+:registry|\/\/.+|proxy|https_proxy|http_proxy|noproxy|strict_ssl|userconfig|globalconfig|fetch_.+|maxsockets)$/i
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || keep.test(key)))
}

/** Runs `command args` in `cwd`; resolves when it exits, kills it (SIGKILL) and rejects on timeout. */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** npm itself: the one running this test when there is one (`npm test`, `npx`), else `npm` on the PATH. */
function npm(args: readonly string[], cwd: string): Promise<Run> {
  const cli = process.env['npm_execpath']
  const [command, prefix] = cli !== undefined && basename(cli) === 'npm-cli.js' ? [process.execPath, [cli]] : ['npm', []]
  return run(command, [...prefix, '--no-update-notifier', ...args], cwd, npmEnv(), NPM_TIMEOUT_MS)
}

/** The packages under `project`'s node_modules (nested ones too) and the size of its files. */
function installed(project: string): Installed {
  const names: string[] = []
  const visitModules = (modules: string): void => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue
      const scoped = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((sub) => `${entry}/${sub}`) : [entry]
      for (const name of scoped) {
        if (!existsSync(join(modules, name, 'package.json'))) continue
        names.push(name)
        visitModules(join(modules, name, 'node_modules'))
      }
    }
  }
  visitModules(join(project, 'node_modules'))
  return { names, bytes: sizeOf(join(project, 'node_modules')) }
}

/** The total size of the files under `dir` (links not followed). */
function sizeOf(dir: string): number {
  let bytes = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    bytes += entry.isDirectory() ? sizeOf(path) : lstatSync(path).size
  }
  return bytes
}

/** A seamfs package's short name: `@seamfs/backend-memory` → `memory`. */
const short = (name: string): string => name.replace(/^@seamfs\/(backend-)?/, '')

/** One line of figures; MB = 10⁶ bytes of file content (`du -sb`, not disk blocks). */
const figures = (label: string, { names, bytes }: Installed): string => `consumer: ${label}: ${names.length} packages, ${(bytes / 1e6).toFixed(1)} MB`

/** Installs `tarballs` into a fresh project `dir`; what npm said is in the error when it fails. */
async function install(dir: string, tarballs: readonly string[]): Promise<Installed> {
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `seamfs-consumer-${basename(dir)}`, private: true, type: 'module' }, null, 2))
  const r = await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], dir)
  if (r.code !== 0) throw new Error(`npm install in ${dir} exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  return installed(dir)
}

/** The install locations of the @seamfs packages in `dir`'s lockfile whose tarball is not one of ours. */
function notFromTarballs(dir: string): string[] {
  const lock = readJson<{ packages: Record<string, { resolved?: string }> }>(join(dir, 'package-lock.json'))
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes('node_modules/@seamfs/') && entry.resolved?.startsWith('file:') !== true)
    .map(([path, entry]) => `${path} (${entry.resolved ?? 'no resolved'})`)
}

/** The consumer's steps, shared by the ESM and the CommonJS variant: write, read, edit, then a stale edit. */
const CONSUMER_BODY = `
const fs = new MemoryFileSystem()
const tools = Object.fromEntries(createFileTools({ fs, policy: new ObservationPolicy() }).map((tool) => [tool.name, tool]))
const call = async (name, args) => {
  const { text, isError, code } = await tools[name].execute(args)
  return { name, text, isError, code: code ?? null }
}
const calls = [
  await call('write', { file_path: '/notes.txt', content: 'hello\\nworld\\n' }),
  await call('read', { file_path: '/notes.txt' }),
  await call('edit', { file_path: '/notes.txt', old_string: 'world', new_string: 'seamfs' }),
]
fs.volume.writeFileSync('/notes.txt', 'changed behind the agent\\n')
calls.push(await call('edit', { file_path: '/notes.txt', old_string: 'changed', new_string: 'clobbered' }))
console.log(JSON.stringify({ tools: Object.keys(tools), calls, files: fs.toJSON() }))
`

const ESM_CONSUMER = `import { MemoryFileSystem } from '@seamfs/backend-memory'
import { ObservationPolicy } from '@seamfs/core'
import { createFileTools } from '@seamfs/tools'
${CONSUMER_BODY}`

const CJS_CONSUMER = `'use strict'
const { MemoryFileSystem } = require('@seamfs/backend-memory')
const { ObservationPolicy } = require('@seamfs/core')
const { createFileTools } = require('@seamfs/tools')
;(async () => {
${CONSUMER_BODY}
})().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
`

/** A consumer of the public types; the `@ts-expect-error` lines fail the check if a type degrades to `any`. */
const TS_CONSUMER = `import { FileSystem, FsError, isFsError, ObservationPolicy } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool, type ToolContext, type ToolResult } from '@seamfs/tools'

const fs: FileSystem = new MemoryFileSystem({ files: { 'notes.txt': 'hello\\n' } })
const tools: readonly FileTool[] = createFileTools({ fs, policy: new ObservationPolicy() })
const read: FileTool | undefined = tools.find((tool) => tool.name === 'read')
const context: ToolContext = { session: 'consumer', signal: AbortSignal.timeout(1000) }
const result: ToolResult | undefined = await read?.execute({ file_path: '/notes.txt' }, context)
const text: string = result?.text ?? ''
const failed: boolean = result?.isError ?? true
const err: unknown = FsError.notFound('read', '/missing.txt')
if (isFsError(err)) console.log(err.code)
console.log(text, failed)

// @ts-expect-error createFileTools needs a FileSystem
createFileTools({})
// @ts-expect-error a ToolResult's text is a string
export const wrong: number = result?.text
`

/** The type check: nodenext, strict and the repo's own strictness, declaration files checked (TypeScript's own lib excepted). */
const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: false,
    skipDefaultLibCheck: true,
    types: ['node'],
    typeRoots: [join(REPO, 'node_modules/@types')],
  },
  files: ['consumer.ts'],
}

const NOTES = '<path>/notes.txt</path>\n<type>file</type>\n<content>\n'

// The tests run concurrently: the type check (the slowest step) overlaps the CLI's install.
describe.concurrent('consumer smoke test: the packed tarballs installed in fresh projects', () => {
  const all = workspaces()
  const publishable = [...all.values()].filter((ws) => ws.manifest.private !== true)
  const setA = closure(all, ['@seamfs/core', '@seamfs/tools', '@seamfs/backend-memory'])
  const setB = closure(all, ['@seamfs/cli', '@seamfs/core', '@seamfs/tools', '@seamfs/backend-local'])
  let root = ''
  let packed: readonly Packed[] = []
  let installA: Promise<Installed>
  let installB: Promise<Installed>
  const projectA = (): string => join(root, 'core-tools-memory')
  const projectB = (): string => join(root, 'cli')

  beforeAll(async () => {
    const missing = [...new Set([...setA, ...setB])].flatMap((name) => {
      const ws = all.get(name)!
      return targets(ws.manifest)
        .filter((path) => path.startsWith('dist/') && !existsSync(join(REPO, ws.dir, path)))
        .map((path) => `${ws.dir}/${path}`)
    })
    if (missing.length > 0) throw new Error(`the build is missing (${missing.join(', ')}): run \`npm run build\` first`)
    root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-consumer-')))
    const packs = join(root, 'packs')
    mkdirSync(packs)
    const r = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', packs, ...publishable.flatMap((ws) => ['-w', ws.dir])], REPO)
    if (r.code !== 0) throw new Error(`npm pack exited ${r.code}\n${r.stderr}`)
    packed = JSON.parse(r.stdout) as Packed[]
    const tarballs = (names: readonly string[]): string[] => names.map((name) => join(packs, packed.find((p) => p.name === name)!.filename))
    // Both installs run at once; each test awaits the one it needs (and fails with npm's output if it failed).
    installA = install(projectA(), tarballs(setA))
    installB = install(projectB(), tarballs(setB))
    const [a, b] = await Promise.allSettled([installA, installB])
    if (a.status === 'fulfilled') console.log(figures(setA.map(short).join('+'), a.value))
    if (b.status === 'fulfilled') console.log(figures(setB.map(short).join('+'), b.value))
  }, TIMEOUT_MS)

  afterAll(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true })
  })

  it('each tarball holds every file its exports and bin point at', ({ expect }) => {
    expect(packed.map((p) => p.name).sort()).toEqual(publishable.map((ws) => ws.manifest.name).sort())
    // A package still being written (no dist yet, outside the install sets) is checked once it is built.
    const built = publishable.filter((ws) => setA.includes(ws.manifest.name) || setB.includes(ws.manifest.name) || existsSync(join(REPO, ws.dir, 'dist')))
    for (const ws of built) {
      const files = new Set(packed.find((p) => p.name === ws.manifest.name)!.files.map((f) => f.path))
      expect(
        targets(ws.manifest).filter((path) => !files.has(path)),
        `${ws.manifest.name}: exports/bin targets missing from the tarball`,
      ).toEqual([])
    }
    // A bin path in npm's own form: `npm publish` rewrites (and warns about) one written `./bin/…`.
    expect(
      publishable
        .flatMap((ws) => Object.values(typeof ws.manifest.bin === 'string' ? { bin: ws.manifest.bin } : (ws.manifest.bin ?? {})))
        .filter((path) => path.startsWith('./')),
      'bin paths npm publish would rewrite',
    ).toEqual([])
    // Every tarball carries the license; the kit carries the examples its README points at.
    expect(packed.filter((p) => !p.files.some((f) => f.path === 'LICENSE')).map((p) => p.name)).toEqual([])
    const kit = packed.find((p) => p.name === '@seamfs/conformance')
    expect(
      kit?.files
        .map((f) => f.path)
        .filter((path) => path.startsWith('examples/'))
        .sort(),
    ).toEqual(
      readdirSync(join(REPO, 'conformance/examples'))
        .map((name) => `examples/${name}`)
        .sort(),
    )
  })

  it(
    'core + tools + memory: a handful of packages, no HTTP framework, test runner, cloud SDK, ssh2 or MCP SDK',
    async ({ expect }) => {
      const figuresA = await installA
      expect(notFromTarballs(projectA())).toEqual([])
      expect([...new Set(figuresA.names.filter((name) => HEAVY.test(name)))].sort()).toEqual([])
      expect(figuresA.names.length).toBeLessThanOrEqual(MAX_PACKAGES_CORE_TOOLS_MEMORY)
    },
    TIMEOUT_MS,
  )

  /** Runs a consumer script written into project A with `node`; returns its parsed output. */
  const consume = async (expect: ExpectStatic, file: string, source: string, nodeArgs: readonly string[] = []): Promise<unknown> => {
    await installA
    writeFileSync(join(projectA(), file), source)
    const r = await run(process.execPath, [...nodeArgs, file], projectA())
    expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' })
    return JSON.parse(r.stdout)
  }

  const expected = (expect: ExpectStatic): unknown => ({
    tools: ['list', 'read', 'write', 'edit', 'glob', 'grep', 'read_files', 'tree', 'info', 'list_roots', 'create_directory', 'move', 'delete'],
    calls: [
      { name: 'write', text: `${NOTES}Created file\n</content>`, isError: false, code: null },
      { name: 'read', text: `${NOTES}1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>`, isError: false, code: null },
      { name: 'edit', text: expect.stringMatching(/^The file \/notes\.txt has been updated successfully\./) as unknown, isError: false, code: null },
      {
        name: 'edit',
        text: 'Error: cannot edit "/notes.txt": file changed since it was read — re-read the file, then retry',
        isError: true,
        code: 'FS_STALE_VERSION',
      },
    ],
    files: { 'notes.txt': 'changed behind the agent\n' },
  })

  it(
    'core + tools + memory: an ESM consumer writes, reads, edits, and a stale edit is refused',
    async ({ expect }) => {
      expect(await consume(expect, 'consumer.mjs', ESM_CONSUMER)).toEqual(expected(expect))
    },
    TIMEOUT_MS,
  )

  const requireModule = (process.features as { require_module?: boolean }).require_module === true
  it.skipIf(!requireModule)(
    `core + tools + memory: a CommonJS consumer, through require(esm)${requireModule ? '' : ` — SKIPPED: Node ${process.version} cannot require() ES modules (needs ≥ 20.19)`}`,
    async ({ expect }) => {
      expect(await consume(expect, 'consumer.cjs', CJS_CONSUMER, ['--disable-warning=ExperimentalWarning'])).toEqual(expected(expect))
    },
    TIMEOUT_MS,
  )

  it(
    'core + tools + memory: a strict TypeScript consumer type-checks against the installed declarations',
    async ({ expect }) => {
      await installA
      writeFileSync(join(projectA(), 'consumer.ts'), TS_CONSUMER)
      writeFileSync(join(projectA(), 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2))
      const r = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], projectA(), process.env, 180_000)
      expect(r, r.stdout).toEqual({ code: 0, stdout: '', stderr: '' })
    },
    TIMEOUT_MS,
  )

  it(
    'the CLI: installs without a test runner and runs its bin',
    async ({ expect }) => {
      const figuresB = await installB
      expect(notFromTarballs(projectB())).toEqual([])
      expect([...new Set(figuresB.names.filter((name) => TEST_RUNNERS.test(name)))].sort()).toEqual([])
      const bin = join(projectB(), 'node_modules/@seamfs/cli/bin/seamfs.js')
      const help = await run(process.execPath, [bin, '--help'], projectB())
      expect(help, help.stderr).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^Usage: seamfs /) as unknown })
      const version = await run(process.execPath, [bin, '--version'], projectB())
      expect(version).toEqual({ code: 0, stdout: `${all.get('@seamfs/cli')!.manifest.version}\n`, stderr: '' })
      // A tool command through the installed local backend, in a directory of its own.
      const work = join(projectB(), 'work')
      mkdirSync(join(work, 'home'), { recursive: true })
      writeFileSync(join(work, 'a.txt'), 'one\n')
      const ls = await run(process.execPath, [bin, 'ls'], work, { ...process.env, HOME: join(work, 'home') })
      expect(ls, ls.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining('\na.txt\n') as unknown })
    },
    TIMEOUT_MS,
  )
})
