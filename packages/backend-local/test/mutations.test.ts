/**
 * remove, rename and createDirectory on the local disk: what the conformance kit cannot see from
 * outside (staging directories, write protection, the root, the recursive walk's bounds, mtime).
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isFsError, type FsErrorCode } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { ERRNO_TABLE } from '../src/errors.js'

let root: string
let fs: LocalFileSystem

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'seamfs-mutations-'))
  fs = new LocalFileSystem({ cwd: root })
})

afterEach(async () => {
  await fs.close()
  chmodSync(root, 0o700)
  rmSync(root, { recursive: true, force: true })
})

async function codeOf(promise: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await promise
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return err.code
  }
}

async function errorOf(promise: Promise<unknown>): Promise<{ code?: string; details?: Record<string, unknown> }> {
  return promise.then(
    () => ({}),
    (err: unknown) => err as { code?: string; details?: Record<string, unknown> },
  )
}

const at = (path: string): string => join(root, path)
const put = (path: string, content = path): void => {
  mkdirSync(join(at(path), '..'), { recursive: true })
  writeFileSync(at(path), content)
}
const write = async (path: string, content = path) => fs.writeText(await fs.resolve(path), content)
const remove = async (path: string, opts?: Parameters<LocalFileSystem['remove']>[1]) => fs.remove(await fs.resolve(path), opts)
const move = async (from: string, to: string, opts?: Parameters<LocalFileSystem['rename']>[2]) => fs.rename(await fs.resolve(from), await fs.resolve(to), opts)
const mkdir = async (path: string) => fs.createDirectory(await fs.resolve(path))
/** Every name under `root` (staging directories included), as a sorted list of relative paths. */
const everything = (dir = root, prefix = ''): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? [`${prefix}${e.name}/`, ...everything(join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`]))
    .sort()

const isRoot = process.getuid?.() === 0

describe('capabilities and the error table', () => {
  it('declares remove, atomic rename (directories too), native directories and mtime', () => {
    expect(fs.capabilities).toMatchObject({ remove: true, rename: 'atomic', renameDirectories: true, createDirectory: 'native', mtime: true })
  })

  it('ENOTEMPTY is FS_NOT_EMPTY', () => {
    expect(ERRNO_TABLE.ENOTEMPTY?.code).toBe('FS_NOT_EMPTY')
  })
})

describe('remove and staging directories', () => {
  it('a directory whose last file was just written and removed is empty: its idle staging directory does not count', async () => {
    await write('d/f.txt', 'x')
    expect(everything().some((name) => name.startsWith('d/.seamfs-stage-'))).toBe(true)
    expect(await remove('d/f.txt')).toEqual({ type: 'file', entries: 1 })
    expect(await remove('d')).toEqual({ type: 'directory', entries: 1 })
    expect(existsSync(at('d'))).toBe(false)
  })

  it('a dead writer’s staging residue does not count either; a live process’s staging directory does', async () => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
    const deadPid = Number(child.stdout.toString())
    mkdirSync(at(`dead/.seamfs-stage-${deadPid}-abcdef`), { recursive: true })
    writeFileSync(at(`dead/.seamfs-stage-${deadPid}-abcdef/1.tmp`), 'partial')
    expect(await remove('dead')).toEqual({ type: 'directory', entries: 1 })
    // The parent process is alive: its staging directory may be a write in flight.
    mkdirSync(at(`live/.seamfs-stage-${process.ppid}-abcdef`), { recursive: true })
    expect(await codeOf(remove('live'))).toBe('FS_NOT_EMPTY')
    expect(existsSync(at(`live/.seamfs-stage-${process.ppid}-abcdef`))).toBe(true)
  })

  it('a recursive remove of a tree written through the filesystem counts only the listed entries', async () => {
    for (const path of ['t/a.txt', 't/b/c.txt']) await write(path)
    expect(await remove('t', { recursive: true })).toEqual({ type: 'directory', entries: 4 })
    expect(everything()).toEqual([])
  })

  it('staging names are reserved: removing, creating or renaming to one is FS_UNSUPPORTED', async () => {
    await write('a.txt')
    const stage = `.seamfs-stage-${process.pid}-abcdef`
    expect(await codeOf(mkdir(stage))).toBe('FS_UNSUPPORTED')
    expect(await codeOf(move('a.txt', `${stage}/a.txt`))).toBe('FS_UNSUPPORTED')
    mkdirSync(at(stage))
    expect(await codeOf(remove(stage))).toBe('FS_UNSUPPORTED')
    expect(existsSync(at(stage))).toBe(true)
  })
})

describe('recursive remove bounds', () => {
  it('the count includes the directory itself; above maxRemoveEntries it is FS_TOO_LARGE with details, and nothing is removed', async () => {
    const bounded = new LocalFileSystem({ cwd: root, maxRemoveEntries: 4 })
    put('big/a.txt')
    put('big/sub/b.txt')
    put('big/sub/c.txt')
    symlinkSync('/', at('big/sub/to-root'))
    const error = await errorOf(bounded.remove(await bounded.resolve('big'), { recursive: true }))
    expect(error.code).toBe('FS_TOO_LARGE')
    expect(error.details).toEqual({ entries: 5, limit: 4 })
    expect(everything()).toEqual(['big/', 'big/a.txt', 'big/sub/', 'big/sub/b.txt', 'big/sub/c.txt', 'big/sub/to-root'])
    rmSync(at('big/sub/to-root'))
    rmSync(at('big/a.txt'))
    // big, sub, b.txt, c.txt: exactly the bound.
    expect(await bounded.remove(await bounded.resolve('big'), { recursive: true })).toEqual({ type: 'directory', entries: 4 })
  })

  it('a deep tree (300 levels) is removed whole, each level entered through its parent', async () => {
    let path = 'deep'
    for (let i = 0; i < 300; i++) path += '/d'
    mkdirSync(at(path), { recursive: true })
    writeFileSync(at(`${path}/leaf.txt`), 'leaf')
    expect(await remove('deep', { recursive: true })).toEqual({ type: 'directory', entries: 302 })
    expect(everything()).toEqual([])
  })

  it('links inside are removed, never followed: a link to a directory counts as one entry and its target keeps everything', async () => {
    put('outside/keep/a.txt', 'keep')
    mkdirSync(at('tree'))
    symlinkSync(at('outside'), at('tree/dir-link'))
    symlinkSync(at('outside/keep/a.txt'), at('tree/file-link'))
    symlinkSync(at('nowhere'), at('tree/dangling'))
    expect(await remove('tree', { recursive: true })).toEqual({ type: 'directory', entries: 4 })
    expect(everything()).toEqual(['outside/', 'outside/keep/', 'outside/keep/a.txt'])
  })

  it('the root of the disk is never removed or moved', async () => {
    expect(await codeOf(fs.remove(await fs.resolve('/')))).toBe('FS_PERMISSION_DENIED')
    // (core refuses this one first: the destination is inside the source)
    expect(await codeOf(fs.rename(await fs.resolve('/'), await fs.resolve('moved-root')))).not.toBe('ok')
    expect(everything()).toEqual([])
  })
})

describe('remove: special files and guards', () => {
  it('a FIFO is FS_NOT_REGULAR_FILE for remove and rename, and stays', async () => {
    const made = spawnSync('mkfifo', [at('pipe')])
    if (made.status !== 0) return
    expect(await codeOf(remove('pipe'))).toBe('FS_NOT_REGULAR_FILE')
    expect(await codeOf(move('pipe', 'pipe2'))).toBe('FS_NOT_REGULAR_FILE')
    expect(lstatSync(at('pipe')).isFIFO()).toBe(true)
  })

  it('a guard is checked against the entry removed: an external rewrite makes it stale', async () => {
    const { version } = await write('g.txt', 'one')
    writeFileSync(at('g.txt'), 'external change')
    expect(await codeOf(remove('g.txt', { expected: { version } }))).toBe('FS_STALE_VERSION')
    expect(readFileSync(at('g.txt'), 'utf8')).toBe('external change')
  })

  it('a write-protected file is removed (as unlink(2) allows; only replacing one is refused)', async () => {
    put('ro.txt', 'ro')
    chmodSync(at('ro.txt'), 0o444)
    expect(await remove('ro.txt')).toEqual({ type: 'file', entries: 1 })
  })
})

describe('rename', () => {
  it('overwrite of a write-protected file is FS_PERMISSION_DENIED; both files stay', async () => {
    put('a.txt', 'a')
    put('ro.txt', 'ro')
    chmodSync(at('ro.txt'), 0o444)
    expect(await codeOf(move('a.txt', 'ro.txt', { overwrite: true }))).toBe('FS_PERMISSION_DENIED')
    expect([readFileSync(at('a.txt'), 'utf8'), readFileSync(at('ro.txt'), 'utf8')]).toEqual(['a', 'ro'])
  })

  it('a directory never replaces a file: FS_NOT_OBSERVED without overwrite, FS_UNSUPPORTED with it', async () => {
    put('d/x.txt', 'x')
    put('f.txt', 'f')
    expect(await codeOf(move('d', 'f.txt'))).toBe('FS_NOT_OBSERVED')
    expect(await codeOf(move('d', 'f.txt', { overwrite: true }))).toBe('FS_UNSUPPORTED')
    expect(everything()).toEqual(['d/', 'd/x.txt', 'f.txt'])
  })

  it('a guard on a directory source names its version: an entry added since makes it stale', async () => {
    put('d/x.txt', 'x')
    const version = (await fs.stat(await fs.resolve('d')))?.version
    put('d/y.txt', 'y')
    expect(await codeOf(move('d', 'e', { expected: { version: version! } }))).toBe('FS_STALE_VERSION')
    expect(everything()).toEqual(['d/', 'd/x.txt', 'd/y.txt'])
    const now = (await fs.stat(await fs.resolve('d')))?.version
    expect(await codeOf(move('d', 'e', { expected: { version: now! } }))).toBe('ok')
    expect(everything()).toEqual(['e/', 'e/x.txt', 'e/y.txt'])
  })

  it('a moved file keeps its inode, mode and content; the outcome version is the next stat', async () => {
    put('a.sh', 'run')
    chmodSync(at('a.sh'), 0o751)
    const ino = statSync(at('a.sh')).ino
    for (const [from, to, overwrite] of [
      ['a.sh', 'b.sh', false],
      ['b.sh', 'c/d.sh', true],
    ] as const) {
      const outcome = await move(from, to, { overwrite })
      expect(outcome.version).toBe((await fs.stat(await fs.resolve(to)))?.version)
      expect(statSync(at(to)).ino).toBe(ino)
      expect(statSync(at(to)).mode & 0o777).toBe(0o751)
    }
    expect(everything()).toEqual(['c/', 'c/d.sh'])
  })

  it('a directory moves with its staging directory and files; writes and removes work in it afterwards', async () => {
    await write('d/x.txt', 'x')
    expect((await move('d', 'e/moved')).type).toBe('directory')
    await write('e/moved/y.txt', 'y')
    expect(await fs.readText(await fs.resolve('e/moved/x.txt'))).toBe('x')
    await remove('e/moved/x.txt')
    await remove('e/moved/y.txt')
    expect(await remove('e/moved')).toEqual({ type: 'directory', entries: 1 })
  })

  it('a failed rename removes the parents it made for the destination (unlink of the source refused)', async (ctx) => {
    if (isRoot) ctx.skip() // root ignores the directory's mode
    put('ro/a.txt', 'a')
    chmodSync(at('ro'), 0o555)
    try {
      expect(await codeOf(move('ro/a.txt', 'new/deep/b.txt'))).toBe('FS_PERMISSION_DENIED')
    } finally {
      chmodSync(at('ro'), 0o755)
    }
    expect(everything()).toEqual(['ro/', 'ro/a.txt'])
  })

  it('a rename across filesystems is FS_IO_ERROR (EXDEV); the source stays and the parents made for it are removed', async (ctx) => {
    if (!existsSync('/dev/shm') || statSync('/dev/shm').dev === statSync(root).dev) ctx.skip()
    const other = mkdtempSync('/dev/shm/seamfs-mutations-')
    try {
      for (const overwrite of [false, true]) {
        put('a.txt', 'a')
        const error = await errorOf(fs.rename(await fs.resolve('a.txt'), await fs.resolve(join(other, 'new/deep/b.txt')), { overwrite }))
        expect(error.code).toBe('FS_IO_ERROR')
        expect(readdirSync(other)).toEqual([])
        expect(readFileSync(at('a.txt'), 'utf8')).toBe('a')
      }
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('through a symlink: renaming the link’s path moves the file it names; the link stays (dangling)', async () => {
    put('real.txt', 'real')
    symlinkSync('real.txt', at('link.txt'))
    await move('link.txt', 'moved.txt')
    expect(readFileSync(at('moved.txt'), 'utf8')).toBe('real')
    expect(lstatSync(at('link.txt')).isSymbolicLink()).toBe(true)
    expect(existsSync(at('real.txt'))).toBe(false)
  })

  it('to a path through a dangling link: the file lands where the link points, and the link stays', async () => {
    put('a.txt', 'a')
    symlinkSync('target.txt', at('link.txt'))
    await move('a.txt', 'link.txt')
    expect(readFileSync(at('target.txt'), 'utf8')).toBe('a')
    expect(lstatSync(at('link.txt')).isSymbolicLink()).toBe(true)
  })
})

describe('createDirectory', () => {
  it('makes the missing parents; created is true once, then false', async () => {
    expect(await mkdir('a/b/c')).toEqual({ created: true })
    expect(await mkdir('a/b/c')).toEqual({ created: false })
    expect(await mkdir('a/b')).toEqual({ created: false })
    expect(everything()).toEqual(['a/', 'a/b/', 'a/b/c/'])
  })

  it('through a symlinked directory: made inside the link’s target', async () => {
    mkdirSync(at('real'))
    symlinkSync('real', at('link'))
    expect(await mkdir('link/sub')).toEqual({ created: true })
    expect(statSync(at('real/sub')).isDirectory()).toBe(true)
  })

  it('a file at the path, or on the way when resolved before the file came, is FS_NOT_DIRECTORY', async () => {
    const early = await fs.resolve('f/sub')
    put('f', 'file')
    expect(await codeOf(mkdir('f'))).toBe('FS_NOT_DIRECTORY')
    expect(await codeOf(fs.createDirectory(early))).toBe('FS_NOT_DIRECTORY')
    expect(readFileSync(at('f'), 'utf8')).toBe('file')
  })
})

describe('mtime', () => {
  it('stat, lstat (of a link too) and a listed link carry the stat’s mtime in whole milliseconds', async () => {
    put('d/f.txt', 'f')
    symlinkSync('f.txt', at('d/link'))
    const ms = (path: string, follow = true): number => Number((follow ? statSync : lstatSync)(at(path), { bigint: true }).mtimeMs)
    expect((await fs.stat(await fs.resolve('d/f.txt')))?.mtime).toBe(ms('d/f.txt'))
    expect((await fs.stat(await fs.resolve('d')))?.mtime).toBe(ms('d'))
    expect((await fs.lstat('d/link'))?.mtime).toBe(ms('d/link', false))
    const entries = await fs.listDir(await fs.resolve('d'))
    expect(entries.find((e) => e.name === 'link')?.mtime).toBe(ms('d/f.txt'))
  })
})
