import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem, type FileSystem, type FsErrorCode, type FsTarget, type SandboxOptions } from '@seamfs/core/backend'
import { runSandboxControls } from './controls.js'

/** One backend, as the corpus sees it: the filesystem under test plus raw, unfenced access to its store. */
export interface SandboxEnv {
  readonly inner: FileSystem
  /** Absolute directory that will contain `root`, `outside` and the other fixtures; also `inner`'s cwd. */
  readonly base: string
  mkdir(abs: string): void | Promise<void>
  writeFile(abs: string, text: string): void | Promise<void>
  /** The content of a file (symlinks followed), or undefined for a directory or a missing path. */
  readFile(abs: string): string | undefined | Promise<string | undefined>
  symlink(abs: string, target: string): void | Promise<void>
  /** Removes a file, a link (not its target) or a whole directory. */
  remove(abs: string): void | Promise<void>
  /** Every path under `abs` (symlinks listed, never followed), sorted. */
  listTree(abs: string): string[] | Promise<string[]>
  dispose(): void | Promise<void>
}

export interface SandboxFixture {
  readonly name: string
  create(): Promise<SandboxEnv>
}

/** The absolute paths of the seeded tree (see {@link seedLayout}). */
export interface Layout {
  readonly base: string
  readonly root: string
  readonly outside: string
  /** The sibling whose name starts with the root's: `<base>/root-evil`. */
  readonly evil: string
  /** A directory the extra-root controls make writable. */
  readonly extra: string
}

export type Verb = 'writeText' | 'editText'
export const VERBS: readonly Verb[] = ['writeText', 'editText']
/**
 * The mutations the escape corpus tries: the text verbs, a remove, and a rename from the
 * attempt's path (to an inside name) and to it (from an inside file): both ends are fenced.
 */
export type FenceVerb = Verb | 'remove' | 'rename from' | 'rename to'
export const FENCE_VERBS: readonly FenceVerb[] = [...VERBS, 'remove', 'rename from', 'rename to']
/** The verbs that act on an existing file: they take an attempt's `editPath` when it has one. */
const ON_EXISTING: ReadonlySet<FenceVerb> = new Set(['editText', 'remove', 'rename from'])
export const PAYLOAD = 'PWNED\n'
export const EDIT = { oldString: 'secret', newString: 'PWNED', replaceAll: true } as const

/**
 * How an attempt must fail: `denied` is FS_SANDBOX_DENIED from the fence (the
 * mutation call); `resolve:<code>` is the sandbox's `resolve` rejecting the
 * malformed path before any fence is reached.
 */
export type Outcome = 'denied' | `resolve:${FsErrorCode}`

export type Category =
  | 'absolute path'
  | '.. in every position'
  | './../'
  | 'sibling sharing the root name'
  | 'symlinked directory pointing out'
  | 'new file under a symlinked directory'
  | 'symlinked file pointing out'
  | 'symlink swapped between resolve and write'
  | 'the root itself'
  | 'trailing slash'
  | 'NUL byte and malformed text'
  | 'very long path'
  | 'forged target'

export interface Ctx {
  readonly env: SandboxEnv
  readonly l: Layout
}

export interface EscapeAttempt {
  readonly category: Category
  /** The test name after "denies writeText to". */
  readonly label: string
  /** The path handed to the sandbox's `resolve` (for both verbs unless `editPath`). */
  readonly path?: (l: Layout) => string
  /** A new-file attempt edits an existing outside file through the same route instead. */
  readonly editPath?: (l: Layout) => string
  /** The `cwd` option of that `resolve`. */
  readonly cwd?: (l: Layout) => string
  /** A hand-built target instead of a resolved one. */
  readonly forged?: (ctx: Ctx) => Promise<FsTarget>
  /** Runs between the caller's `resolve` and the mutation (a swapped link). */
  readonly swap?: (ctx: Ctx) => Promise<void>
  readonly options?: (l: Layout) => Partial<SandboxOptions>
  /** Acceptable outcomes; default `['denied']`. Two only where backends legitimately differ. */
  readonly outcomes?: readonly Outcome[]
}

/** Seeds the tree every test starts from; every outside file contains the word `secret`. */
export async function seedLayout(env: SandboxEnv): Promise<Layout> {
  const b = env.base
  const l: Layout = { base: b, root: `${b}/root`, outside: `${b}/outside`, evil: `${b}/root-evil`, extra: `${b}/extra` }
  for (const dir of [`${l.root}/sub`, `${l.outside}/sub`, l.evil, l.extra]) await env.mkdir(dir)
  const files: Record<string, string> = {
    [`${b}/top.txt`]: 'top secret\n',
    [`${b}/rootx.txt`]: 'prefix secret\n',
    [`${l.outside}/x.txt`]: 'outside secret\n',
    [`${l.outside}/sub/y.txt`]: 'outside sub secret\n',
    [`${l.evil}/x.txt`]: 'evil secret\n',
    [`${l.extra}/e.txt`]: 'extra secret\n',
    [`${l.root}/inside.txt`]: 'inside secret\n',
    [`${l.root}/sub/x.txt`]: 'sub secret\n',
  }
  for (const [abs, text] of Object.entries(files)) await env.writeFile(abs, text)
  const links: Record<string, string> = {
    'link-out': l.outside,
    'link-out-rel': '../outside',
    'link-parent': '..',
    'link-root': '.',
    'link-evil': '../root-evil',
    'chain-a': 'chain-b',
    'chain-b': '../outside',
    'sub/deep-link': '../../outside',
    'file-link-out': `${l.outside}/x.txt`,
    'file-link-out-rel': '../outside/x.txt',
    'file-link-evil': '../root-evil/x.txt',
    'sub/file-link-chain': '../file-link-out',
    'dangling-out': '../outside/dangling-new.txt',
    'link-in': 'sub',
    'file-link-in': 'inside.txt',
    swap: 'sub',
    'swap-file': 'inside.txt',
  }
  for (const [name, target] of Object.entries(links)) await env.symlink(`${l.root}/${name}`, target)
  // Real entries the swap attempts replace by links pointing out.
  await env.mkdir(`${l.root}/real-dir`)
  await env.writeFile(`${l.root}/real-dir/x.txt`, 'real dir secret\n')
  await env.writeFile(`${l.root}/real-file.txt`, 'real file secret\n')
  return l
}

/** Every path under `abs` with its content (undefined for directories), for "nothing changed". */
export async function snapshot(env: SandboxEnv, abs: string): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {}
  for (const path of await env.listTree(abs)) out[path] = (await env.readFile(path)) ?? null
  return out
}

/** Swaps the link `root/<name>` to point at `target`. */
const relink =
  (name: string, target: (l: Layout) => string) =>
  async ({ env, l }: Ctx) => {
    await env.remove(`${l.root}/${name}`)
    await env.symlink(`${l.root}/${name}`, target(l))
  }

const up = (n: number): string => '../'.repeat(n)
const x = (l: Layout): string => `${l.outside}/x.txt`

export const ESCAPES: readonly EscapeAttempt[] = [
  // absolute paths
  { category: 'absolute path', label: '<base>/outside/x.txt', path: x },
  { category: 'absolute path', label: '<base>/outside/new.txt (new file)', path: (l) => `${l.outside}/new.txt`, editPath: x },
  { category: 'absolute path', label: '<base>/outside/sub/y.txt (nested)', path: (l) => `${l.outside}/sub/y.txt` },
  { category: 'absolute path', label: "<base>/top.txt (the root's parent)", path: (l) => `${l.base}/top.txt` },
  { category: 'absolute path', label: '<base> (the parent directory)', path: (l) => l.base },
  { category: 'absolute path', label: '/ (the filesystem root)', path: () => '/' },
  { category: 'absolute path', label: '<base>//outside///x.txt (doubled separators)', path: (l) => `${l.base}//outside///x.txt` },
  { category: 'absolute path', label: '<root>/../outside/x.txt (absolute with ..)', path: (l) => `${l.root}/../outside/x.txt` },
  { category: 'absolute path', label: 'x.txt with cwd <base>/outside', path: () => 'x.txt', cwd: (l) => l.outside },
  { category: 'absolute path', label: '../x.txt with cwd <base>/outside/sub', path: () => '../x.txt', cwd: (l) => `${l.outside}/sub` },
  // `..` in every position
  { category: '.. in every position', label: '../outside/x.txt (.. at the start)', path: () => '../outside/x.txt' },
  { category: '.. in every position', label: 'sub/../../outside/x.txt (.. in the middle)', path: () => 'sub/../../outside/x.txt' },
  { category: '.. in every position', label: 'sub/../.. (.. at the end)', path: () => 'sub/../..' },
  { category: '.. in every position', label: '.. (.. alone)', path: () => '..' },
  { category: '.. in every position', label: '../top.txt (one level up)', path: () => '../top.txt' },
  { category: '.. in every position', label: 'sub/new/../../../outside/x.txt (through a missing directory)', path: () => 'sub/new/../../../outside/x.txt' },
  { category: '.. in every position', label: '../root/../outside/x.txt (out, back in, out again)', path: () => '../root/../outside/x.txt' },
  {
    category: '.. in every position',
    label: '../../<base name>/outside/x.txt (two up, back down)',
    path: (l) => `../../${l.base.split('/').at(-1) ?? ''}/outside/x.txt`,
  },
  {
    category: '.. in every position',
    label: '(../ x 64)<base>/outside/x.txt (past the filesystem root)',
    path: (l) => `${up(64)}${l.base.slice(1)}/outside/x.txt`,
  },
  { category: '.. in every position', label: 'sub/..//../outside/x.txt (.. beside an empty segment)', path: () => 'sub/..//../outside/x.txt' },
  { category: '.. in every position', label: 'link-in/../../outside/x.txt (.. after an inner link)', path: () => 'link-in/../../outside/x.txt' },
  // `./../`
  { category: './../', label: './../outside/x.txt', path: () => './../outside/x.txt' },
  { category: './../', label: '././../outside/x.txt', path: () => '././../outside/x.txt' },
  { category: './../', label: '.././outside/./x.txt', path: () => '.././outside/./x.txt' },
  { category: './../', label: 'sub/./.././../outside/x.txt', path: () => 'sub/./.././../outside/x.txt' },
  { category: './../', label: './../top.txt', path: () => './../top.txt' },
  // a sibling whose name starts with the root's name
  { category: 'sibling sharing the root name', label: '../root-evil/x.txt', path: () => '../root-evil/x.txt' },
  { category: 'sibling sharing the root name', label: '<root>-evil/x.txt (absolute)', path: (l) => `${l.root}-evil/x.txt` },
  {
    category: 'sibling sharing the root name',
    label: '<root>-evil/new.txt (new file)',
    path: (l) => `${l.root}-evil/new.txt`,
    editPath: (l) => `${l.root}-evil/x.txt`,
  },
  { category: 'sibling sharing the root name', label: '<root>x.txt (a file named like the root plus a suffix)', path: (l) => `${l.root}x.txt` },
  {
    category: 'sibling sharing the root name',
    label: '<root>.bak/x.txt (a missing sibling)',
    path: (l) => `${l.root}.bak/x.txt`,
    editPath: (l) => `${l.root}x.txt`,
  },
  { category: 'sibling sharing the root name', label: 'link-evil/x.txt (a link to the sibling)', path: () => 'link-evil/x.txt' },
  { category: 'sibling sharing the root name', label: 'file-link-evil (a file link into the sibling)', path: () => 'file-link-evil' },
  // a symlinked directory pointing out
  { category: 'symlinked directory pointing out', label: 'link-out/x.txt (absolute link)', path: () => 'link-out/x.txt' },
  { category: 'symlinked directory pointing out', label: 'link-out-rel/x.txt (relative link)', path: () => 'link-out-rel/x.txt' },
  { category: 'symlinked directory pointing out', label: 'link-out/sub/y.txt (deeper under the link)', path: () => 'link-out/sub/y.txt' },
  { category: 'symlinked directory pointing out', label: 'chain-a/x.txt (a chain of two links)', path: () => 'chain-a/x.txt' },
  { category: 'symlinked directory pointing out', label: 'link-parent/outside/x.txt (a link to ..)', path: () => 'link-parent/outside/x.txt' },
  { category: 'symlinked directory pointing out', label: 'sub/deep-link/x.txt (a nested relative link)', path: () => 'sub/deep-link/x.txt' },
  { category: 'symlinked directory pointing out', label: '<root>/link-out/x.txt (absolute path through the link)', path: (l) => `${l.root}/link-out/x.txt` },
  { category: 'symlinked directory pointing out', label: 'link-out (the link itself, a directory outside)', path: () => 'link-out' },
  // a new file under it
  { category: 'new file under a symlinked directory', label: 'link-out/new.txt', path: () => 'link-out/new.txt', editPath: () => 'link-out/x.txt' },
  { category: 'new file under a symlinked directory', label: 'link-out-rel/new.txt', path: () => 'link-out-rel/new.txt', editPath: () => 'link-out-rel/x.txt' },
  {
    category: 'new file under a symlinked directory',
    label: 'link-out/newdir/deeper/new.txt (missing parents)',
    path: () => 'link-out/newdir/deeper/new.txt',
    editPath: () => 'link-out/sub/y.txt',
  },
  { category: 'new file under a symlinked directory', label: 'chain-a/new.txt', path: () => 'chain-a/new.txt', editPath: () => 'chain-a/x.txt' },
  { category: 'new file under a symlinked directory', label: 'link-parent/new.txt', path: () => 'link-parent/new.txt', editPath: () => 'link-parent/top.txt' },
  {
    category: 'new file under a symlinked directory',
    label: 'sub/deep-link/new.txt',
    path: () => 'sub/deep-link/new.txt',
    editPath: () => 'sub/deep-link/x.txt',
  },
  // a symlinked file pointing out
  { category: 'symlinked file pointing out', label: 'file-link-out (absolute link)', path: () => 'file-link-out' },
  { category: 'symlinked file pointing out', label: 'file-link-out-rel (relative link)', path: () => 'file-link-out-rel' },
  { category: 'symlinked file pointing out', label: 'sub/file-link-chain (a link to a link)', path: () => 'sub/file-link-chain' },
  { category: 'symlinked file pointing out', label: 'dangling-out (a dangling link naming a new outside file)', path: () => 'dangling-out' },
  { category: 'symlinked file pointing out', label: '<root>/file-link-out (absolute path)', path: (l) => `${l.root}/file-link-out` },
  // a symlink swapped between resolve and write
  {
    category: 'symlink swapped between resolve and write',
    label: 'swap/x.txt (dir link re-pointed out)',
    path: () => 'swap/x.txt',
    swap: relink('swap', (l) => l.outside),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'swap/x.txt (dir link re-pointed out, relative)',
    path: () => 'swap/x.txt',
    swap: relink('swap', () => '../outside'),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'swap/new.txt (new file, dir link re-pointed out)',
    path: () => 'swap/new.txt',
    editPath: () => 'swap/x.txt',
    swap: relink('swap', (l) => l.outside),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'swap-file (file link re-pointed out)',
    path: () => 'swap-file',
    swap: relink('swap-file', x),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'real-dir/x.txt (a real directory replaced by a link out)',
    path: () => 'real-dir/x.txt',
    swap: relink('real-dir', (l) => l.outside),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'real-file.txt (a real file replaced by a link out)',
    path: () => 'real-file.txt',
    swap: relink('real-file.txt', x),
  },
  {
    category: 'symlink swapped between resolve and write',
    label: 'swap/x.txt (dir link re-pointed to the sibling)',
    path: () => 'swap/x.txt',
    swap: relink('swap', (l) => l.evil),
  },
  // the root itself
  { category: 'the root itself', label: '. (the root)', path: () => '.' },
  { category: 'the root itself', label: '<root> (absolute)', path: (l) => l.root },
  { category: 'the root itself', label: '<root>/. (absolute, dot)', path: (l) => `${l.root}/.` },
  { category: 'the root itself', label: 'sub/.. (back to the root)', path: () => 'sub/..' },
  { category: 'the root itself', label: '../root (out and back)', path: () => '../root' },
  { category: 'the root itself', label: 'link-root (a link to the root)', path: () => 'link-root' },
  { category: 'the root itself', label: '<base>/extra (an extra writable root itself)', path: (l) => l.extra, options: (l) => ({ writableRoots: [l.extra] }) },
  {
    category: 'the root itself',
    label: '<base>/extra-missing (a missing extra root itself)',
    path: (l) => `${l.base}/extra-missing`,
    options: (l) => ({ writableRoots: [`${l.base}/extra-missing`] }),
  },
  // trailing slashes
  { category: 'trailing slash', label: '../outside/x.txt/', path: () => '../outside/x.txt/' },
  { category: 'trailing slash', label: '<base>/outside/x.txt/ (absolute)', path: (l) => `${x(l)}/` },
  { category: 'trailing slash', label: '../outside/ (a directory outside)', path: () => '../outside/' },
  { category: 'trailing slash', label: 'link-out/x.txt// (through a link)', path: () => 'link-out/x.txt//' },
  { category: 'trailing slash', label: '<root>/ (the root)', path: (l) => `${l.root}/` },
  { category: 'trailing slash', label: './ (the root, relative)', path: () => './' },
  { category: 'trailing slash', label: '../root-evil/x.txt/ (the sibling)', path: () => '../root-evil/x.txt/' },
  // NUL bytes and other malformed text: `resolve` refuses them before any fence
  { category: 'NUL byte and malformed text', label: 'inside.txt\\0', path: () => 'inside.txt\0', outcomes: ['resolve:FS_NOT_FOUND'] },
  { category: 'NUL byte and malformed text', label: '\\0../outside/x.txt', path: () => '\0../outside/x.txt', outcomes: ['resolve:FS_NOT_FOUND'] },
  { category: 'NUL byte and malformed text', label: '../outside/x.txt\\0', path: () => '../outside/x.txt\0', outcomes: ['resolve:FS_NOT_FOUND'] },
  { category: 'NUL byte and malformed text', label: 'sub\\0/../../outside/x.txt', path: () => 'sub\0/../../outside/x.txt', outcomes: ['resolve:FS_NOT_FOUND'] },
  {
    category: 'NUL byte and malformed text',
    label: '<base>/outside/x.txt\\0.txt (absolute)',
    path: (l) => `${x(l)}\0.txt`,
    outcomes: ['resolve:FS_NOT_FOUND'],
  },
  { category: 'NUL byte and malformed text', label: '"" (blank)', path: () => '', outcomes: ['resolve:FS_NOT_FOUND'] },
  { category: 'NUL byte and malformed text', label: '"  " (whitespace only)', path: () => '  ', outcomes: ['resolve:FS_NOT_FOUND'] },
  {
    category: 'NUL byte and malformed text',
    label: '../outside/\\uD800.txt (a lone surrogate: refused by resolve, or denied by the fence)',
    path: () => '../outside/\uD800.txt',
    outcomes: ['resolve:FS_NOT_FOUND', 'denied'],
  },
  // very long paths
  {
    category: 'very long path',
    label: '(a/ x 2100)(../ x 2101)outside/x.txt (> PATH_MAX before normalization)',
    path: () => `${'a/'.repeat(2100)}${up(2101)}outside/x.txt`,
  },
  {
    category: 'very long path',
    label: '<root>(/sub/.. x 1000)/../outside/x.txt (absolute)',
    path: (l) => `${l.root}${'/sub/..'.repeat(1000)}/../outside/x.txt`,
  },
  { category: 'very long path', label: 'link-out(/. x 3000)/x.txt', path: () => `link-out${'/.'.repeat(3000)}/x.txt` },
  {
    category: 'very long path',
    label: '../outside/(n x 300).txt (a name > NAME_MAX: denied, or refused by the store)',
    path: () => `../outside/${'n'.repeat(300)}.txt`,
    editPath: () => '../outside/x.txt',
    outcomes: ['denied', 'resolve:FS_IO_ERROR'],
  },
  {
    category: 'very long path',
    label: '../outside(/d x 2100)/x.txt (> PATH_MAX after normalization: denied, or refused by the store)',
    path: () => `../outside${'/d'.repeat(2100)}/x.txt`,
    outcomes: ['denied', 'resolve:FS_IO_ERROR'],
  },
  // forged targets: the fence re-resolves the display path; the key a caller hands in counts for nothing
  {
    category: 'forged target',
    label: 'a target keyed inside whose display path is outside',
    forged: async ({ env, l }) => ({ targetKey: (await env.inner.resolve(`${l.root}/inside.txt`)).targetKey, displayPath: x(l) }),
  },
  {
    category: 'forged target',
    label: 'a target whose display path has a NUL byte (no longer resolves)',
    forged: async ({ env, l }) => ({ targetKey: (await env.inner.resolve(`${l.root}/inside.txt`)).targetKey, displayPath: `${l.root}/inside.txt\0` }),
  },
  {
    category: 'forged target',
    label: 'a target with a relative display path leading out',
    forged: async ({ env, l }) => ({ targetKey: (await env.inner.resolve(`${l.root}/inside.txt`)).targetKey, displayPath: '../outside/x.txt' }),
  },
]

export function mutate(fs: FileSystem, verb: Verb, target: FsTarget): Promise<unknown> {
  return verb === 'writeText' ? fs.writeText(target, PAYLOAD) : fs.editText(target, EDIT)
}

/** One fence verb on `target`; a rename's other end is a name inside the root. */
async function fenceMutate(fs: FileSystem, verb: FenceVerb, target: FsTarget): Promise<unknown> {
  if (verb === 'remove') return fs.remove(target)
  if (verb === 'rename from') return fs.rename(target, await fs.resolve('moved-in.txt'), { overwrite: true })
  if (verb === 'rename to') return fs.rename(await fs.resolve('inside.txt'), target, { overwrite: true })
  return mutate(fs, verb, target)
}

function codeOf(err: unknown): FsErrorCode | undefined {
  return isFsError(err) ? err.code : undefined
}

interface AttemptResult {
  /** `denied`, `resolve:<code>`, `mutate:<code>` or `succeeded`. */
  readonly outcome: string
  readonly err: unknown
  /** Everything under the base just before the mutation (after any swap), and after it. */
  readonly before: Record<string, string | null>
  readonly after: Record<string, string | null>
}

/** Runs one attempt: resolve (or forge) the target, swap a link if asked, snapshot, mutate, snapshot. */
async function runAttempt(ctx: Ctx, a: EscapeAttempt, verb: FenceVerb): Promise<AttemptResult> {
  const { env, l } = ctx
  const sandbox = new SandboxedFileSystem(env.inner, { mode: 'workspace-write', workspaceRoot: l.root, ...a.options?.(l) })
  let before = await snapshot(env, l.base)
  const done = async (outcome: string, err: unknown): Promise<AttemptResult> => ({ outcome, err, before, after: await snapshot(env, l.base) })
  let target: FsTarget
  try {
    if (a.forged !== undefined) target = await a.forged(ctx)
    else {
      const path = (ON_EXISTING.has(verb) ? a.editPath : undefined) ?? a.path
      if (path === undefined) throw new TypeError(`attempt "${a.label}" has neither path nor forged`)
      target = await sandbox.resolve(path(l), a.cwd === undefined ? {} : { cwd: a.cwd(l) })
    }
  } catch (err) {
    // Confined reads deny at resolve a path that fails outside the roots (its failure would tell what exists there).
    return done(codeOf(err) === 'FS_SANDBOX_DENIED' ? 'denied' : `resolve:${codeOf(err) ?? String(err)}`, err)
  }
  if (a.swap !== undefined) {
    await a.swap(ctx)
    before = await snapshot(env, l.base)
  }
  try {
    await fenceMutate(sandbox, verb, target)
    return await done('succeeded', undefined)
  } catch (err) {
    return done(codeOf(err) === 'FS_SANDBOX_DENIED' ? 'denied' : `mutate:${codeOf(err) ?? String(err)}`, err)
  }
}

export function runSandboxCorpus(fixture: SandboxFixture): void {
  describe(`sandbox escape corpus on ${fixture.name}`, () => {
    let ctx: Ctx
    beforeEach(async () => {
      const env = await fixture.create()
      ctx = { env, l: await seedLayout(env) }
    })
    afterEach(async () => {
      await ctx.env.inner.close()
      await ctx.env.dispose()
    })

    const categories = [...new Set(ESCAPES.map((a) => a.category))]
    for (const category of categories) {
      describe(category, () => {
        for (const a of ESCAPES.filter((e) => e.category === category)) {
          const outcomes = a.outcomes ?? ['denied']
          for (const verb of FENCE_VERBS) {
            const name =
              outcomes.length === 1 && outcomes[0] === 'denied' ? `denies ${verb} to ${a.label}` : `rejects ${verb} to ${a.label} with ${outcomes.join(' | ')}`
            it(name, async () => {
              const { outcome, err, before, after } = await runAttempt(ctx, a, verb)
              expect(outcomes as readonly string[], `got ${outcome}: ${String(err)}`).toContain(outcome)
              const code = outcome === 'denied' ? 'FS_SANDBOX_DENIED' : (outcome.split(':')[1] as FsErrorCode)
              expect(isFsError(err, code)).toBe(true)
              expect(after, 'nothing under the base may change').toEqual(before)
            })
          }
        }
      })
    }

    runSandboxControls(() => ctx)
  })
}
