/**
 * `resolve` on deep trees: the key of an existing path is the kernel's one walk of
 * it, not realpath(3), which walks every ancestor again (its cost grows with the square of the
 * depth: the sandbox, which resolves every path it checks, took 25 s where the bare tools took
 * 0.2 s on 800 nested folders). The key must stay exactly realpath's, whatever the path holds.
 */
import { execFileSync } from 'node:child_process'
import * as nodeFs from 'node:fs'
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'

/** Linux with procfs: where a descriptor names its path, and resolve uses it. */
const DESCRIPTOR_PATHS = process.platform === 'linux' && nodeFs.existsSync('/proc/self/fd')

let top: string
let fs: LocalFileSystem

beforeEach(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-deep-')))
  fs = new LocalFileSystem({ cwd: top })
})

afterEach(() => {
  rmSync(top, { recursive: true, force: true })
})

/** A chain of `depth` directories `d/d/…` under `top`; its deepest path. */
function chain(depth: number): string {
  const path = join(top, ...Array<string>(depth).fill('d'))
  mkdirSync(path, { recursive: true })
  return path
}

/** Calls of realpath(3) (`realpathSync.native`, what the backend falls back on) while `body` runs. */
async function realpathCalls(body: () => Promise<unknown>): Promise<number> {
  const native = nodeFs.realpathSync.native
  let calls = 0
  nodeFs.realpathSync.native = ((...args: Parameters<typeof native>) => {
    calls++
    return native(...args)
  }) as typeof native
  try {
    await body()
  } finally {
    nodeFs.realpathSync.native = native
  }
  return calls
}

describe('resolve of a deep path', () => {
  it('keys every existing shape exactly as realpath does', async () => {
    const deep = chain(300)
    writeFileSync(join(deep, 'f.txt'), 'x')
    mkdirSync(join(top, 'real/sub'), { recursive: true })
    writeFileSync(join(top, 'real/sub/a.txt'), 'a')
    writeFileSync(join(top, 'x (deleted)'), 'a name that looks like a removed file')
    writeFileSync(join(top, 'write-only'), 'w')
    chmodSync(join(top, 'write-only'), 0o200)
    symlinkSync(join(top, 'real'), join(top, 'abs-link'))
    symlinkSync('real/sub', join(top, 'rel-link'))
    symlinkSync('rel-link', join(top, 'chain-link'))
    symlinkSync(deep, join(top, 'deep-link'))
    symlinkSync('../..', join(top, 'real/sub/up'))
    execFileSync('mkfifo', [join(top, 'fifo')])
    const shapes = [
      deep,
      join(deep, 'f.txt'),
      join(top, 'deep-link/f.txt'),
      join(top, 'abs-link/sub/a.txt'),
      join(top, 'rel-link/a.txt'),
      join(top, 'chain-link'),
      join(top, 'real/sub/up/real/sub/up'),
      join(top, 'x (deleted)'),
      join(top, 'write-only'),
      // Opened for nothing: a FIFO without a writer must not block the lookup.
      join(top, 'fifo'),
      top,
      '/',
    ]
    for (const path of shapes) expect((await fs.resolve(path)).targetKey, path).toBe(realpathSync.native(path))
  })

  it('keys a missing path under a link as before: the real parent plus the missing name', async () => {
    const deep = chain(200)
    symlinkSync(deep, join(top, 'deep-link'))
    expect((await fs.resolve('deep-link/new/file.txt')).targetKey).toBe(join(deep, 'new/file.txt'))
    // A dangling link leads to the path it names.
    symlinkSync(join(deep, 'later.txt'), join(top, 'dangling'))
    expect((await fs.resolve('dangling')).targetKey).toBe(join(deep, 'later.txt'))
  })

  it('follows the tree as it is now: a directory moved and replaced by a link to elsewhere', async () => {
    const deep = chain(50)
    writeFileSync(join(deep, 'f.txt'), 'x')
    mkdirSync(join(top, 'elsewhere/d'), { recursive: true })
    const path = join(top, 'd/d/d/f.txt')
    const before = await fs.resolve(path)
    renameSync(join(top, 'd'), join(top, 'moved'))
    symlinkSync(join(top, 'elsewhere'), join(top, 'd'))
    expect((await fs.resolve(path)).targetKey).toBe(join(top, 'elsewhere/d/d/f.txt'))
    expect(before.targetKey).toBe(path)
  })

  it.skipIf(!DESCRIPTOR_PATHS)('walks an existing path once, at any depth: realpath(3), which walks every ancestor again, is not called', async () => {
    const deep = chain(400)
    writeFileSync(join(deep, 'f.txt'), 'x')
    symlinkSync(deep, join(top, 'deep-link'))
    const paths = {
      'the deepest directory': deep,
      'a file there': join(deep, 'f.txt'),
      'it through a link': join(top, 'deep-link/f.txt'),
      'a relative path': 'd/d/d',
    }
    for (const [label, path] of Object.entries(paths)) expect(await realpathCalls(() => fs.resolve(path)), label).toBe(0)
  })
})
