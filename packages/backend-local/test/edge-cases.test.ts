import { execFileSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isFsError, type FsErrorCode, type FsWriteIntent } from '@seamfs/core'
import { FsVersion } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { abortedThen } from './aborted.js'

// Edge cases: each test pins a bug found once (or a rule nothing else tested).

let root: string
let fs: LocalFileSystem

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'seamfs-review-'))
  fs = new LocalFileSystem({ cwd: root })
})

afterEach(() => {
  rmSync(root, { recursive: true, force: true })
})

async function codeOf(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<FsErrorCode | 'resolved'> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
    return 'resolved'
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return err.code
  }
}

const DEAD_PID = 2 ** 22 + 1 // above Linux's PID_MAX_LIMIT: never alive
const isRoot = process.getuid?.() === 0

describe('the version guard across instances', () => {
  it('two instances in one process: of N concurrent replaceIfVersion writers from one version, exactly one wins', async () => {
    const other = new LocalFileSystem({ cwd: root })
    const { version } = await fs.writeText(await fs.resolve('race.txt'), 'base')
    const n = 8
    const settled = await Promise.allSettled(
      Array.from({ length: n }, async (_, i) => {
        const side = i % 2 === 0 ? fs : other
        return side.writeText(await side.resolve('race.txt'), `writer ${i}`, {
          expected: { kind: 'replaceIfVersion', version },
        })
      }),
    )
    const won = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []))
    expect(won.length).toBe(1)
    expect(readFileSync(join(root, 'race.txt'), 'utf8')).toBe(`writer ${won[0]}`)
  })
})

describe('broken symlinks', () => {
  it('listDir reports a symlink whose target runs through a regular file as other, instead of failing', async () => {
    writeFileSync(join(root, 'f.txt'), 'x')
    symlinkSync('f.txt/child', join(root, 'through-file'))
    const entries = await fs.listDir(await fs.resolve('.'))
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['f.txt', 'file'],
      ['through-file', 'other'],
    ])
    const broken = entries.find((e) => e.name === 'through-file')
    expect(broken?.version).toBeUndefined()
    // Like any broken link, its target stats as absent.
    if (broken !== undefined) expect(await fs.stat(broken.target)).toBeUndefined()
  })

  it('stat of a target whose parent became a regular file is undefined (absent), not an error', async () => {
    mkdirSync(join(root, 'd'))
    const target = await fs.resolve('d/x.txt')
    rmSync(join(root, 'd'), { recursive: true })
    writeFileSync(join(root, 'd'), 'now a file')
    expect(await fs.stat(target)).toBeUndefined()
  })

  it('a dangling relative symlink inside a symlinked directory is followed from the real directory, as the kernel does', async () => {
    mkdirSync(join(root, 'real', 'sub'), { recursive: true })
    symlinkSync(join(root, 'real', 'sub'), join(root, 'alias'))
    symlinkSync('../target.txt', join(root, 'real', 'sub', 'link'))
    const viaAlias = await fs.resolve('alias/link')
    const viaReal = await fs.resolve('real/sub/link')
    expect(viaAlias.targetKey).toBe(join(root, 'real', 'target.txt'))
    expect(viaReal.targetKey).toBe(viaAlias.targetKey)
    await fs.writeText(viaAlias, 'through the alias')
    // The link now reaches the file that was written, and nothing was created beside it.
    expect(readFileSync(join(root, 'alias', 'link'), 'utf8')).toBe('through the alias')
    expect(existsSync(join(root, 'target.txt'))).toBe(false)
    expect(lstatSync(join(root, 'real', 'sub', 'link')).isSymbolicLink()).toBe(true)
  })
})

describe('names that look like staging directories', () => {
  const lookalike = `.seamfs-stage-${DEAD_PID}-abcdef`

  it('writeText refuses a target named like a staging directory, or under one, and creates nothing', async () => {
    expect(await codeOf(async () => fs.writeText(await fs.resolve(lookalike), 'user data'))).toBe('FS_UNSUPPORTED')
    expect(await codeOf(async () => fs.writeText(await fs.resolve(`${lookalike}/inner.txt`), 'user data'))).toBe('FS_UNSUPPORTED')
    const own = `.seamfs-stage-${process.pid}-abcdef`
    expect(await codeOf(async () => fs.writeText(await fs.resolve(own), 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_UNSUPPORTED')
    expect(readdirSync(root)).toEqual([])
  })

  it('a regular file named like a staging directory (made by someone else) is listed and never swept', async () => {
    writeFileSync(join(root, lookalike), 'user data')
    writeFileSync(join(root, `.seamfs-stage-${process.pid}-Zz9Zz9`), 'more user data')
    await fs.writeText(await fs.resolve('a.txt'), 'a')
    expect(readFileSync(join(root, lookalike), 'utf8')).toBe('user data')
    expect(readFileSync(join(root, `.seamfs-stage-${process.pid}-Zz9Zz9`), 'utf8')).toBe('more user data')
    const names = (await fs.listDir(await fs.resolve('.'))).map((e) => e.name)
    expect([...names].sort()).toEqual([`.seamfs-stage-${process.pid}-Zz9Zz9`, lookalike, 'a.txt'].sort())
  })
})

describe('the residue sweep is best effort', () => {
  it.skipIf(!isRoot)("a dead writer's residue that cannot be removed does not fail writes in its directory (needs root for chattr)", async () => {
    const residue = join(root, `.seamfs-stage-${DEAD_PID}-Ab12Cd`)
    mkdirSync(residue)
    const pinned = join(residue, '1.tmp')
    writeFileSync(pinned, 'half')
    execFileSync('chattr', ['+i', pinned])
    try {
      const outcome = await fs.writeText(await fs.resolve('a.txt'), 'a')
      expect(outcome.operation).toBe('create')
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a')
      expect((await fs.listDir(await fs.resolve('.'))).map((e) => e.name)).toEqual(['a.txt'])
    } finally {
      execFileSync('chattr', ['-i', pinned])
    }
    // Once removable, it goes with the next sweep (a fresh instance has no cached directory state).
    const fresh = new LocalFileSystem({ cwd: root })
    await fresh.writeText(await fresh.resolve('b.txt'), 'b')
    await Promise.all([fs.close(), fresh.close()]) // idle staging directories go now, not after a second
    expect(readdirSync(root).sort()).toEqual(['a.txt', 'b.txt'])
  })
})

describe('bad input', () => {
  it('a path with a lone surrogate is FS_NOT_FOUND (the kernel would store U+FFFD, aliasing other names)', async () => {
    expect(await codeOf(fs.resolve('a\uD800.txt'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('dir\uDC00/a.txt'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.lstat('a\uD800.txt'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('a.txt', { cwd: 'd\uD800' }))).toBe('FS_NOT_FOUND')
    expect(readdirSync(root)).toEqual([])
  })

  it('a non-string cwd is FS_NOT_FOUND, not a raw TypeError', async () => {
    const cwd = 5 as unknown as string
    expect(await codeOf(fs.resolve('a.txt', { cwd }))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.lstat('a.txt', { cwd }))).toBe('FS_NOT_FOUND')
  })

  it('an unknown guard kind is FS_UNSUPPORTED, never silently an unguarded overwrite', async () => {
    writeFileSync(join(root, 'f.txt'), 'keep')
    const t = await fs.resolve('f.txt')
    const bogus = { kind: 'replaceIfUnchanged', version: FsVersion('x') } as unknown as FsWriteIntent
    expect(await codeOf(fs.writeText(t, 'clobbered', { expected: bogus }))).toBe('FS_UNSUPPORTED')
    expect(await codeOf(fs.writeText(await fs.resolve('g.txt'), 'new', { expected: bogus }))).toBe('FS_UNSUPPORTED')
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('keep')
    expect(readdirSync(root)).toEqual(['f.txt'])
  })

  it('a 255-byte file name (the limit) is written, created, edited and listed; 256 bytes is an FsError', async () => {
    const name = 'é'.repeat(120) + 'x'.repeat(15) // 255 bytes
    expect(Buffer.byteLength(name)).toBe(255)
    const t = await fs.resolve(`d/${name}`)
    expect((await fs.writeText(t, 'one', { expected: { kind: 'createIfAbsent' } })).operation).toBe('create')
    await fs.writeText(t, 'two')
    await fs.editText(t, { oldString: 'two', newString: 'three', replaceAll: false })
    expect(await fs.readText(t)).toBe('three')
    expect((await fs.listDir(await fs.resolve('d'))).map((e) => e.name)).toEqual([name])
    await fs.close()
    expect(readdirSync(join(root, 'd'))).toEqual([name])
    expect(await codeOf(async () => fs.writeText(await fs.resolve(`d/${name}y`), 'x'))).toBe('FS_IO_ERROR')
  })
})

describe('files too large for one string', () => {
  /** A sparse file: text in its first bytes, then NULs (text past the binary sample) up to `size`. */
  function sparse(path: string, size: number): void {
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, 'a'.repeat(8192))
      ftruncateSync(fd, size)
    } finally {
      closeSync(fd)
    }
  }

  it('readText and editText of a file longer than the longest string are FS_TOO_LARGE, not FS_NOT_TEXT', async () => {
    const t = await fs.resolve('big.txt')
    sparse(t.targetKey, 2 ** 29 + 1024)
    expect(await codeOf(fs.readText(t))).toBe('FS_TOO_LARGE')
    expect(await codeOf(fs.editText(t, { oldString: 'a', newString: 'b', replaceAll: true }))).toBe('FS_TOO_LARGE')
  }, 60_000)

  it('readText of a file above the largest Buffer is FS_TOO_LARGE, not FS_IO_ERROR', async () => {
    const t = await fs.resolve('huge.txt')
    sparse(t.targetKey, 2 ** 32 + 1)
    expect(await codeOf(fs.readText(t))).toBe('FS_TOO_LARGE')
  })
})

// Two copies of this package in one process (two versions installed side by side) share one pid.
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describe.skipIf(!existsSync(DIST))('review: two copies of the package in one process (needs the build)', () => {
  it("one copy's sweep never removes the other copy's in-flight staging directory", async () => {
    const copy = (await import(pathToFileURL(DIST).href)) as typeof import('@seamfs/backend-local')
    expect(copy.LocalFileSystem).not.toBe(LocalFileSystem)
    const sweeper = new copy.LocalFileSystem({ cwd: root })
    const writer = new LocalFileSystem({
      cwd: root,
      hooks: {
        // While this write is staged, the other copy publishes in the same directory (and sweeps it).
        afterStage: async () => {
          await sweeper.writeText(await sweeper.resolve('other.txt'), 'other')
        },
      },
    })
    const outcome = await writer.writeText(await writer.resolve('mine.txt'), 'mine')
    expect(outcome.operation).toBe('create')
    expect(readFileSync(join(root, 'mine.txt'), 'utf8')).toBe('mine')
    await Promise.all([sweeper.close(), writer.close()])
    expect(readdirSync(root).sort()).toEqual(['mine.txt', 'other.txt'])
  })

  it("a worker thread's sweep never removes the main thread's in-flight staging directory (one pid, two in-flight sets)", async () => {
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads')
      import(workerData.dist).then(({ LocalFileSystem }) => {
        const fs = new LocalFileSystem({ cwd: workerData.root })
        parentPort.on('message', async (what) => {
          if (what === 'close') return fs.close().then(() => parentPort.postMessage('closed'))
          try {
            await fs.writeText(await fs.resolve('other.txt'), 'other')
            parentPort.postMessage('ok')
          } catch (err) {
            parentPort.postMessage('failed: ' + err.code)
          }
        })
        parentPort.postMessage('ready')
      })`,
      // Plain Node (no `source` condition inherited from the test runner), as in production.
      { eval: true, execArgv: [], workerData: { root, dist: pathToFileURL(DIST).href } },
    )
    try {
      await new Promise((ready) => worker.once('message', ready))
      const inWorker = (what = 'write'): Promise<unknown> =>
        new Promise((done) => {
          worker.once('message', done)
          worker.postMessage(what)
        })
      // While this write is staged, the worker publishes in the same directory (and sweeps it).
      const writer = new LocalFileSystem({ cwd: root, hooks: { afterStage: async () => void (await inWorker()) } })
      const outcome = await writer.writeText(await writer.resolve('mine.txt'), 'mine')
      expect(outcome.operation).toBe('create')
      await writer.close()
      await inWorker('close')
      expect(readdirSync(root).sort()).toEqual(['mine.txt', 'other.txt'])
    } finally {
      await worker.terminate()
    }
  })
})

describe('aborts while the temp file is written', () => {
  it('an abort that lands after staging (Node aborts the data write) leaves the old content and no residue', async () => {
    for (const content of ['x'.repeat(4 * 1024 * 1024), '']) {
      const controller = new AbortController()
      const aborting = new LocalFileSystem({ cwd: root, hooks: { afterStage: () => controller.abort() } })
      const t = await aborting.resolve('f.txt')
      writeFileSync(t.targetKey, 'old')
      const unchanged = (): void => {
        expect(readFileSync(t.targetKey, 'utf8')).toBe('old')
        expect(readdirSync(root)).toEqual(['f.txt'])
      }
      await abortedThen(aborting.writeText(t, content, { signal: controller.signal }), unchanged)
      const again = new AbortController()
      const editing = new LocalFileSystem({ cwd: root, hooks: { afterStage: () => again.abort() } })
      const edit = { oldString: 'old', newString: content, replaceAll: false }
      await abortedThen(editing.editText(t, edit, { signal: again.signal }), unchanged)
    }
  })
})

describe('parents made by a failed write', () => {
  it('a write that fails after creating missing parent directories removes them again (no residue in a listing)', async () => {
    mkdirSync(join(root, 'kept'))
    for (const hook of ['afterStage', 'beforeCommit'] as const) {
      const faulty = new LocalFileSystem({
        cwd: root,
        hooks: {
          [hook]: () => {
            throw Object.assign(new Error('injected'), { code: 'ENOSPC' })
          },
        },
      })
      expect(await codeOf(async () => faulty.writeText(await faulty.resolve('new/deep/f.txt'), 'x'))).toBe('FS_IO_ERROR')
      expect(await codeOf(async () => faulty.writeText(await faulty.resolve('kept/a/f.txt'), 'x'))).toBe('FS_IO_ERROR')
      const controller = new AbortController()
      const aborting = new LocalFileSystem({ cwd: root, hooks: { [hook]: () => controller.abort() } })
      const t = await aborting.resolve('new/f.txt')
      await abortedThen(aborting.writeText(t, 'x', { signal: controller.signal }), () => {
        expect(readdirSync(root)).toEqual(['kept'])
        expect(readdirSync(join(root, 'kept'))).toEqual([])
      })
    }
  })
})

describe('the outcome version is not taken from a later writer', () => {
  it('an in-place write landing right after the commit is not attributed to this write: a guard built on its outcome is stale', async () => {
    const clobber = (path: string): void => writeFileSync(path, 'written in place by someone else') // same inode
    const racy = new LocalFileSystem({ cwd: root, hooks: { afterCommit: clobber } })
    const cases: Array<[string, () => Promise<{ version: FsVersion }>]> = [
      ['create', async () => racy.writeText(await racy.resolve('c.txt'), 'mine', { expected: { kind: 'createIfAbsent' } })],
      ['replace', async () => racy.writeText(await racy.resolve('r.txt'), 'mine')],
      [
        'edit',
        async () => {
          writeFileSync(join(root, 'e.txt'), 'old')
          return racy.editText(await racy.resolve('e.txt'), { oldString: 'old', newString: 'mine', replaceAll: false })
        },
      ],
    ]
    for (const [name, run] of cases) {
      const { version } = await run()
      const path = join(root, `${name[0]}.txt`)
      const t = await fs.resolve(path)
      expect((await fs.stat(t))?.version, name).not.toBe(version)
      expect(await codeOf(fs.writeText(t, 'lost update', { expected: { kind: 'replaceIfVersion', version } })), name).toBe('FS_STALE_VERSION')
      expect(readFileSync(path, 'utf8'), name).toBe('written in place by someone else')
    }
  })
})
