/**
 * Nothing the agent plants gets executed, and the library is fenced by default: what tools the user runs execute from the workspace is read-only to the model — by name
 * (`.git`, `node_modules`, package-manager config), by kind (a git repository under any name) and
 * by identity (the seamfs code this process runs) — and `createFileTools` without a fence of the
 * caller's own confines to its root. Through the real tools, over the real disk; git itself shows
 * what a planted repository would have run.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { DEFAULT_PROTECTED_NAMES, EXECUTED_NAMES, loadedCodePaths, registerLoadedPackage, SandboxedFileSystem } from '@seamfs/core'
import { createFileToolsByName, type FileToolsByName, type ToolResult } from '@seamfs/tools'

let dir: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-exec-')))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const codeOf = (r: ToolResult): string | undefined => (r as { code?: string }).code

/** The tools as a library user sets them up: a local backend whose cwd is the workspace, nothing else. */
function tools(ws = join(dir, 'ws')): FileToolsByName {
  mkdirSync(ws, { recursive: true })
  return createFileToolsByName({ fs: new LocalFileSystem({ cwd: ws }) })
}

describe('createFileTools is fenced by default', () => {
  it('no ../x, no absolute path outside, no /etc: refused, nothing written or read outside', async () => {
    const t = tools()
    writeFileSync(join(dir, 'secret.txt'), 'SECRET-CONTENT\n')
    for (const file_path of ['../x.txt', join(dir, 'y.txt'), '/tmp/seamfs-never.txt']) {
      expect(codeOf(await t.write.execute({ file_path, content: 'planted\n' })), file_path).toBe('FS_SANDBOX_DENIED')
    }
    expect(existsSync(join(dir, 'x.txt')) || existsSync(join(dir, 'y.txt')) || existsSync('/tmp/seamfs-never.txt')).toBe(false)
    for (const file_path of ['../secret.txt', join(dir, 'secret.txt'), '/etc/hostname']) {
      const got = await t.read.execute({ file_path })
      expect(codeOf(got), file_path).toBe('FS_SANDBOX_DENIED')
      expect(got.text).not.toContain('SECRET-CONTENT')
    }
    // Inside, everything works.
    expect(codeOf(await t.write.execute({ file_path: 'src/ok.txt', content: 'fine\n' }))).toBeUndefined()
    expect(readFileSync(join(dir, 'ws/src/ok.txt'), 'utf8')).toBe('fine\n')
  })

  it("`sandbox: false` is the explicit widening; a fence of the caller's own is kept as it is", async () => {
    const wide = createFileToolsByName({ fs: new LocalFileSystem({ cwd: join(dir, 'ws') }), sandbox: false })
    mkdirSync(join(dir, 'ws'))
    expect(codeOf(await wide.write.execute({ file_path: '../widened.txt', content: 'w\n' }))).toBeUndefined()
    expect(readFileSync(join(dir, 'widened.txt'), 'utf8')).toBe('w\n')
    // A fence of the caller's own is kept as it is (no second one with other roots).
    const own = new SandboxedFileSystem(new LocalFileSystem({ cwd: dir }), { mode: 'workspace-write', workspaceRoot: dir })
    const t = createFileToolsByName({ fs: own, cwd: join(dir, 'ws') })
    expect(codeOf(await t.write.execute({ file_path: '../by-own-fence.txt', content: 'o\n' }))).toBeUndefined()
  })

  it('a memory backend: the root is its cwd', async () => {
    const t = createFileToolsByName({ fs: new MemoryFileSystem({ cwd: '/w', files: { '/other/x.txt': 'x\n' } }) })
    expect(codeOf(await t.read.execute({ file_path: '/other/x.txt' }))).toBe('FS_SANDBOX_DENIED')
    expect(codeOf(await t.write.execute({ file_path: 'a.txt', content: 'a\n' }))).toBeUndefined()
  })
})

describe('by name: what package managers and git run', () => {
  it('the default set is the executed names; the CLI and deepagents share it', () => {
    expect(DEFAULT_PROTECTED_NAMES).toBe(EXECUTED_NAMES)
    expect(EXECUTED_NAMES).toEqual(expect.arrayContaining(['.git', 'node_modules', '.npmrc', '.yarnrc.yml', '.pnpmfile.cjs', '.husky']))
  })

  it('git hooks, npm bins, npm/yarn/pnpm config: write, edit, move onto, delete are all refused', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'node_modules/.bin'), { recursive: true })
    mkdirSync(join(ws, '.git/hooks'), { recursive: true })
    writeFileSync(join(ws, 'node_modules/.bin/tsc'), '#!/bin/sh\n')
    writeFileSync(join(ws, 'tool.sh'), '#!/bin/sh\necho planted\n')
    const t = tools(ws)
    for (const file_path of [
      '.git/hooks/pre-commit',
      'node_modules/.bin/seamfs',
      'sub/node_modules/x/index.js',
      '.npmrc',
      'pkg/.yarnrc.yml',
      '.pnpmfile.cjs',
      '.husky/pre-push',
      'NODE_MODULES/y.js',
      '.githooks/pre-commit',
      '.pre-commit-config.yaml',
      'lefthook.yml',
      '.venv/lib/python3.11/site-packages/x.pth',
    ]) {
      expect(codeOf(await t.write.execute({ file_path, content: 'echo planted\n' })), file_path).toBe('FS_SANDBOX_DENIED')
    }
    expect(codeOf(await t.move!.execute({ source_path: 'tool.sh', destination_path: 'node_modules/.bin/seamfs' }))).toBe('FS_SANDBOX_DENIED')
    await t.read.execute({ file_path: 'node_modules/.bin/tsc' })
    expect(codeOf(await t.delete!.execute({ path: 'node_modules/.bin/tsc' }))).toBe('FS_SANDBOX_DENIED')
    expect(existsSync(join(ws, 'node_modules/.bin/seamfs')) || existsSync(join(ws, '.npmrc')) || existsSync(join(ws, '.git/hooks/pre-commit'))).toBe(false)
    expect(readFileSync(join(ws, 'node_modules/.bin/tsc'), 'utf8')).toBe('#!/bin/sh\n')
  })
})

/** Runs git in `cwd` with a clean environment (no global config), as a user would; its stdout. */
function git(cwd: string, ...args: string[]): string {
  const env = { PATH: process.env['PATH'] ?? '', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CEILING_DIRECTORIES: dirname(cwd) }
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

describe.skipIf(!hasGit)('by kind: a git repository under any name (git must be installed)', () => {
  /** What a repository needs, as the agent would write it (`config` with an fsmonitor that leaves a mark). */
  const repoFiles = (mark: string): [string, string][] => [
    ['config', `[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = touch ${mark}\n`],
    ['HEAD', 'ref: refs/heads/main\n'],
    ['objects/.keep', ''],
    ['refs/heads/.keep', ''],
  ]

  it('the threat is real: written outside the fence, such a folder makes `git status` there run its command', () => {
    const plain = join(dir, 'plain')
    const mark = join(dir, 'ran')
    for (const [name, content] of repoFiles(mark)) {
      mkdirSync(dirname(join(plain, name)), { recursive: true })
      writeFileSync(join(plain, name), content)
    }
    // A bare repository has no work tree: fsmonitor runs with one. Reading the config is enough to prove git takes the folder.
    expect(git(plain, 'rev-parse', '--is-bare-repository').trim()).toBe('true')
    expect(git(plain, 'config', 'core.fsmonitor').trim()).toBe(`touch ${mark}`)
  })

  it('through the tools, in every order, the write that would complete the repository is refused; git sees none', async () => {
    const ws = join(dir, 'ws')
    const t = tools(ws)
    const orders = [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [1, 0, 3, 2],
      [2, 3, 0, 1],
    ]
    for (const [n, order] of orders.entries()) {
      const files = repoFiles(join(dir, `ran-${n}`))
      const refused: string[] = []
      for (const i of order) {
        const [name, content] = files[i] as [string, string]
        const got = await t.write.execute({ file_path: `build${n}/${name}`, content })
        if (codeOf(got) === 'FS_SANDBOX_DENIED') refused.push(name)
        else expect(codeOf(got), `${name}: ${got.text}`).toBeUndefined()
      }
      expect(refused.length, `order ${order.join(',')}`).toBeGreaterThan(0)
      expect(() => git(join(ws, `build${n}`), 'rev-parse', '--git-dir')).toThrow()
    }
  })

  it('a worktree-style repository (HEAD and commondir) is refused too; an ordinary folder named objects/refs/config is not', async () => {
    const ws = join(dir, 'ws')
    const t = tools(ws)
    expect(codeOf(await t.write.execute({ file_path: 'wt/commondir', content: '../real\n' }))).toBeUndefined()
    expect(codeOf(await t.write.execute({ file_path: 'wt/HEAD', content: 'ref: refs/heads/main\n' }))).toBe('FS_SANDBOX_DENIED')
    // Ordinary project folders with these names, and no HEAD: ordinary work.
    for (const file_path of ['app/config', 'app/objects/a.json', 'app/refs/b.md', 'app/hooks/useThing.ts']) {
      expect(codeOf(await t.write.execute({ file_path, content: 'x\n' })), file_path).toBeUndefined()
    }
  })

  it('an executable FILE moved to objects passes git (it asks only X_OK): the repository it would complete is refused', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    writeFileSync(join(ws, 'build.sh'), '#!/bin/sh\n', { mode: 0o755 })
    const t = tools(ws)
    await t.read.execute({ file_path: 'build.sh' })
    expect(codeOf(await t.move!.execute({ source_path: 'build.sh', destination_path: 'tools/objects' }))).toBeUndefined()
    expect(codeOf(await t.create_directory!.execute({ path: 'tools/refs' }))).toBeUndefined()
    expect(codeOf(await t.write.execute({ file_path: 'tools/config', content: `[core]\n\tfsmonitor = touch ${join(dir, 'ran')}\n` }))).toBeUndefined()
    expect(codeOf(await t.write.execute({ file_path: 'tools/HEAD', content: 'ref: refs/heads/main\n' }))).toBe('FS_SANDBOX_DENIED')
    expect(() => git(join(ws, 'tools'), 'rev-parse', '--git-dir')).toThrow()
  })

  it("a link to a repository's config does not hide it: the check follows the canonical path", async () => {
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    execFileSync('git', ['init', '-q', '--bare', join(ws, 'fixtures/x.git')], { env: { PATH: process.env['PATH'] ?? '', HOME: dir } })
    symlinkSync('fixtures/x.git/config', join(ws, 'fixture-config'))
    const t = tools(ws)
    await t.read.execute({ file_path: 'fixture-config' })
    expect(codeOf(await t.write.execute({ file_path: 'fixture-config', content: `[core]\n\tfsmonitor = touch ${join(dir, 'ran')}\n` }))).toBe(
      'FS_SANDBOX_DENIED',
    )
    expect(readFileSync(join(ws, 'fixtures/x.git/config'), 'utf8')).not.toContain('fsmonitor')
  })

  it('an existing repository under another name (a bare clone in the workspace): its config and hooks are read-only', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    execFileSync('git', ['init', '-q', '--bare', join(ws, 'mirror.git')], { env: { PATH: process.env['PATH'] ?? '', HOME: dir } })
    const t = tools(ws)
    await t.read.execute({ file_path: 'mirror.git/config' })
    expect(codeOf(await t.edit.execute({ file_path: 'mirror.git/config', old_string: '[core]', new_string: '[core]\n\tfsmonitor = touch x' }))).toBe(
      'FS_SANDBOX_DENIED',
    )
    expect(codeOf(await t.write.execute({ file_path: 'mirror.git/hooks/post-update', content: '#!/bin/sh\n' }))).toBe('FS_SANDBOX_DENIED')
    writeFileSync(join(ws, 'elsewhere.txt'), '[core]\n\tfsmonitor = touch x\n')
    expect(codeOf(await t.move!.execute({ source_path: 'elsewhere.txt', destination_path: 'mirror.git/config.worktree' }))).toBe('FS_SANDBOX_DENIED')
    expect(readFileSync(join(ws, 'mirror.git/config'), 'utf8')).not.toContain('fsmonitor')
  })
})

describe('by identity: the seamfs code this process runs', () => {
  it("a package's bin shim and main are recorded with its manifest and build (what the shell and npx run)", () => {
    const pkg = join(dir, 'pkg')
    mkdirSync(join(pkg, 'dist'), { recursive: true })
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'p', main: './lib/main.js', bin: { p: './bin/p.js', q: '../../escape.js' } }))
    writeFileSync(join(pkg, 'dist/index.js'), '')
    registerLoadedPackage(pathToFileURL(join(pkg, 'dist/index.js')).href)
    const paths = loadedCodePaths()
    for (const path of ['package.json', 'dist', 'bin/p.js', 'lib/main.js']) expect(paths, path).toContain(join(pkg, path))
    // A manifest cannot point the protection out of its package.
    expect(paths.some((p) => p.includes('escape.js'))).toBe(false)
  })

  it('every seamfs package loaded here is recorded, with its package.json', () => {
    const paths = loadedCodePaths()
    for (const pkg of ['core', 'tools', 'backend-local', 'backend-memory']) {
      expect(
        paths.some((p) => p.endsWith(join('packages', pkg, 'package.json'))),
        pkg,
      ).toBe(true)
    }
  })

  it('a workspace that holds this very checkout (linked packages): their code and manifests are refused', async () => {
    const repo = realpathSync(fileURLToPath(new URL('../../..', import.meta.url)))
    const t = createFileToolsByName({ fs: new LocalFileSystem({ cwd: repo }) })
    const planted = ['packages/tools/package.json', 'packages/tools/src/.seamfs-planted.js', 'packages/core/dist/.seamfs-planted.js']
    try {
      for (const path of planted) {
        const file_path = relative(repo, join(repo, path))
        expect(codeOf(await t.write.execute({ file_path, content: 'planted\n' })), path).toBe('FS_SANDBOX_DENIED')
      }
    } finally {
      for (const path of planted.slice(1)) rmSync(join(repo, path), { force: true })
    }
    // Not code this process loads: ordinary work in the same checkout.
    const scratch = `.seamfs-executables-test-${process.pid}.txt`
    try {
      expect(codeOf(await t.write.execute({ file_path: scratch, content: 'ok\n' }))).toBeUndefined()
    } finally {
      rmSync(join(repo, scratch), { force: true })
    }
  })
})
