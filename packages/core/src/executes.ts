/**
 * "Things that execute": what tools a user runs will execute from a workspace, so that a model
 * which writes them plants code someone later runs outside any sandbox. The fence
 * (`SandboxedFileSystem`) keeps them read-only to the model in every mode, by three rules:
 *
 * 1. **By name** ({@link EXECUTED_NAMES}, the default `protectedNames`): wherever one of these is a
 *    segment of a path (compared without case), the path is read-only:
 *    - `.git`: a repository's hooks and config are code git runs (`core.fsmonitor` on `git status`);
 *    - `node_modules`: installed packages, and their `.bin` links that `npx` and npm scripts run
 *      first (a file moved to `node_modules/.bin/seamfs` runs on `npx seamfs`);
 *    - `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.yarn`, `.pnpmfile.cjs`: package-manager config and
 *      plugins that run code on install or on any command (`yarnPath`, `.pnpmfile.cjs` hooks,
 *      `.npmrc`'s `script-shell`, `node-options`);
 *    - `.husky`, `.githooks` (a common `core.hooksPath`), `.pre-commit-config.yaml`, lefthook's and
 *      lint-staged's configs: commands git hooks run on commit;
 *    - `bunfig.toml` (preloads), `.cargo` (build config), `.venv` (`site-packages/*.pth` run at
 *      every Python start);
 *    - `seamfs.config.json`: the harness config, which names backends and modules to load.
 * 2. **By kind** ({@link gitRepositoryAt}): a directory git would take for a repository (a `HEAD`, and
 *    `objects` and `refs`, or a `commondir`), whatever it is named: its `config`, `hooks`, `HEAD`,
 *    `commondir` and the rest of its metadata are read-only, and a mutation that would complete one
 *    (the last of `HEAD`, `objects`, `refs` or `commondir` added) is refused. A repository built under
 *    another name with `core.fsmonitor` in its config would run a command on `git status` there.
 * 3. **By identity**: the code of the seamfs packages this process runs (`loaded-code.ts`), however
 *    they are linked, where the store is this machine's disk.
 *
 * Not protected, on purpose: `package.json` (its scripts run on `npm test`, but adding a dependency
 * or a script is ordinary work an agent is asked to do), and source files in general. Add your
 * own with `protectedNames` (names anywhere) and `protectedPaths` (paths of the store).
 */
export const EXECUTED_NAMES: readonly string[] = [
  '.git',
  'node_modules',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.yarn',
  '.pnpmfile.cjs',
  '.husky',
  '.githooks',
  '.pre-commit-config.yaml',
  'lefthook.yml',
  '.lefthook.yml',
  'lefthook-local.yml',
  '.lintstagedrc',
  '.lintstagedrc.json',
  '.lintstagedrc.yaml',
  '.lintstagedrc.yml',
  '.lintstagedrc.js',
  '.lintstagedrc.cjs',
  '.lintstagedrc.mjs',
  'lint-staged.config.js',
  'lint-staged.config.cjs',
  'lint-staged.config.mjs',
  'bunfig.toml',
  '.cargo',
  '.venv',
  'seamfs.config.json',
]

/** Names in a directory that make git take it for a repository (lower case). */
const MARKERS = ['head', 'objects', 'refs', 'commondir'] as const

/** Names of a repository directory whose content git reads as code or settings (lower case); the markers too. */
const METADATA: ReadonlySet<string> = new Set([
  ...MARKERS,
  'config',
  'config.worktree',
  'hooks',
  'info',
  'packed-refs',
  'gitdir',
  'index',
  'worktrees',
  'modules',
])

/** Subdirectories of a repository whose entries git runs (lower case). */
const CODE_DIRS: ReadonlySet<string> = new Set(['hooks'])

/** The segments of a path or key. */
function segmentsOf(path: string): string[] {
  return path.split(/[\\/]+/).filter((s) => s !== '')
}

/** What the check needs of the store: the type of an entry, links not followed (`undefined`: absent). */
export type EntryType = (path: string) => Promise<'file' | 'directory' | 'symlink' | 'other' | undefined>

/** Directories a write makes on its way (its missing parents) that are repository markers. */
const MADE_ON_THE_WAY: ReadonlySet<string> = new Set(['objects', 'refs'])

/**
 * The directories a mutation of `paths[0]` (its display path; `paths[1]`, its canonical key, is
 * looked at for its last names too) would touch as repository metadata, each with the marker the
 * mutation would add there (`adds`: it creates, not removes):
 * - `<path>/..` when the path is named like repository metadata (`config`, `HEAD`, `hooks`…);
 * - `<path>/../..` when its directory is named like one whose entries git runs (`hooks`);
 * - the directory holding any `objects` or `refs` on the way, which a write makes when missing.
 * Empty for every other path: no store call is made for them.
 */
export function repositoryCandidates(paths: readonly string[], adds: boolean): { dir: string; adding: string | undefined }[] {
  const [display] = paths
  if (display === undefined) return []
  const segments = segmentsOf(display)
  const lead = /^[\\/]/.test(display) ? '/' : ''
  const upTo = (i: number): string => (i === 0 ? (lead === '' ? '.' : '/') : `${lead}${segments.slice(0, i).join('/')}`)
  const last = segments.length - 1
  const out: { dir: string; adding: string | undefined }[] = []
  const lastNames = paths.map((p) => (segmentsOf(p).at(-1) ?? '').toLowerCase())
  const named = lastNames.find((n) => METADATA.has(n))
  if (named !== undefined) out.push({ dir: upTo(last), adding: adds && (MARKERS as readonly string[]).includes(named) ? named : undefined })
  if (paths.some((p) => CODE_DIRS.has((segmentsOf(p).at(-2) ?? '').toLowerCase()))) out.push({ dir: upTo(Math.max(0, last - 1)), adding: undefined })
  if (adds) {
    for (let i = 0; i < last; i++) {
      const name = (segments[i] as string).toLowerCase()
      if (MADE_ON_THE_WAY.has(name)) out.push({ dir: upTo(i), adding: name })
    }
  }
  return out
}

/**
 * Whether `dir` is (or, with `adding` there, would be) a directory git takes for a repository:
 * a `HEAD`, and `objects` and `refs`, or a `commondir`. Any entry counts, whatever its type: git
 * follows links and only asks `access(X_OK)` of `objects` and `refs`, which an executable file
 * passes (a script moved to `objects` made one).
 */
export async function gitRepositoryAt(dir: string, adding: string | undefined, typeOf: EntryType): Promise<boolean> {
  const [head, objects, refs, commondir] = await Promise.all(
    MARKERS.map((m) => (m === adding ? Promise.resolve('added' as const) : typeOf(`${dir}/${m === 'head' ? 'HEAD' : m}`))),
  )
  const present = (t: string | undefined): boolean => t !== undefined
  if (!present(head)) return false
  return (present(objects) && present(refs)) || present(commondir)
}
