import { describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem, type SandboxMode, type SandboxOptions } from '@seamfs/core/backend'
import { EDIT, mutate, PAYLOAD, snapshot, VERBS, type Ctx, type Verb } from './corpus.js'

/** Awaits `promise` and returns the FsError code it rejected with (or `resolved`). */
async function outcomeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'resolved'
  } catch (err) {
    return isFsError(err) ? err.code : String(err)
  }
}

/** Snapshot of the base minus the subtrees of `allowed` (the directories a control may change). */
async function restOf(ctx: Ctx, allowed: readonly string[]): Promise<Record<string, string | null>> {
  const all = await snapshot(ctx.env, ctx.l.base)
  return Object.fromEntries(Object.entries(all).filter(([path]) => !allowed.some((dir) => path === dir || path.startsWith(`${dir}/`))))
}

/** Positive controls, the read-only and full-access modes, and confined reads. */
export function runSandboxControls(get: () => Ctx): void {
  const sandbox = (options: Partial<SandboxOptions> = {}): SandboxedFileSystem =>
    new SandboxedFileSystem(get().env.inner, { mode: 'workspace-write', workspaceRoot: get().l.root, ...options })

  /** Writes or edits `path` through a sandbox and checks where the payload landed and that nothing else moved. */
  async function allowed(
    verb: Verb,
    path: string,
    landsAt: string,
    options: Partial<SandboxOptions> = {},
    mayChange: readonly string[] = [get().l.root],
  ): Promise<void> {
    const { env } = get()
    const before = await restOf(get(), mayChange)
    const old = await env.readFile(landsAt)
    const fs = sandbox(options)
    await mutate(fs, verb, await fs.resolve(path))
    expect(await env.readFile(landsAt)).toBe(verb === 'writeText' ? PAYLOAD : old?.replaceAll('secret', 'PWNED'))
    expect(await env.readFile(landsAt)).toContain('PWNED')
    expect(await restOf(get(), mayChange), 'nothing outside the writable roots may change').toEqual(before)
  }

  describe('positive controls (workspace-write)', () => {
    it('writeText creates a new file inside the root', async () => {
      await allowed('writeText', 'new.txt', `${get().l.root}/new.txt`)
    })
    it('writeText and editText replace an existing file inside the root', async () => {
      await allowed('editText', 'inside.txt', `${get().l.root}/inside.txt`)
      expect(await get().env.readFile(`${get().l.root}/inside.txt`)).toBe('inside PWNED\n')
      await allowed('writeText', 'inside.txt', `${get().l.root}/inside.txt`)
    })
    it('writeText creates missing parent directories inside the root', async () => {
      await allowed('writeText', 'a/b/c.txt', `${get().l.root}/a/b/c.txt`)
    })
    it('accepts .. and ./ that stay inside the root', async () => {
      await allowed('writeText', './sub/../sub/./new.txt', `${get().l.root}/sub/new.txt`)
      await allowed('editText', 'sub/../inside.txt', `${get().l.root}/inside.txt`)
    })
    it('accepts an absolute path inside the root', async () => {
      await allowed('editText', `${get().l.root}/sub/x.txt`, `${get().l.root}/sub/x.txt`)
    })
    it('accepts a trailing slash on a file inside the root', async () => {
      await allowed('writeText', 'trailing.txt/', `${get().l.root}/trailing.txt`)
    })
    it('writes and edits through a directory symlink that stays inside', async () => {
      await allowed('writeText', 'link-in/new.txt', `${get().l.root}/sub/new.txt`)
      await allowed('editText', 'link-in/x.txt', `${get().l.root}/sub/x.txt`)
    })
    it('writes through a file symlink that stays inside, and keeps the link', async () => {
      await allowed('writeText', 'file-link-in', `${get().l.root}/inside.txt`)
      expect((await get().env.inner.lstat(`${get().l.root}/file-link-in`))?.type).toBe('symlink')
    })
    it('treats ..x.txt, backslashes and %2e%2e as plain names inside the root', async () => {
      const { root } = get().l
      await allowed('writeText', '..x.txt', `${root}/..x.txt`)
      await allowed('writeText', '..\\outside\\x.txt', `${root}/..\\outside\\x.txt`)
      await allowed('writeText', '%2e%2e/outside/x.txt', `${root}/%2e%2e/outside/x.txt`)
    })
    it('resolves .. after a link lexically: link-out/../lexical.txt lands in the root', async () => {
      await allowed('writeText', 'link-out/../lexical.txt', `${get().l.root}/lexical.txt`)
      expect(await get().env.readFile(`${get().l.base}/lexical.txt`)).toBeUndefined()
    })
    it('writes and edits inside an extra writable root (absolute or relative to the workspace)', async () => {
      const { extra, root } = get().l
      await allowed('writeText', `${extra}/new.txt`, `${extra}/new.txt`, { writableRoots: [extra] }, [root, extra])
      await allowed('editText', '../extra/e.txt', `${extra}/e.txt`, { writableRoots: ['../extra'] }, [root, extra])
    })
    it('still denies the outside with an extra root configured', async () => {
      const { extra } = get().l
      const fs = sandbox({ writableRoots: [extra] })
      const before = await snapshot(get().env, get().l.base)
      expect(await outcomeOf(fs.writeText(await fs.resolve('../outside/x.txt'), PAYLOAD))).toBe('FS_SANDBOX_DENIED')
      expect(await outcomeOf(fs.writeText(await fs.resolve(`${extra}-evil/x.txt`), PAYLOAD))).toBe('FS_SANDBOX_DENIED')
      expect(await snapshot(get().env, get().l.base)).toEqual(before)
    })
    it('follows a workspace root given through a symlink', async () => {
      const { env, l } = get()
      await env.symlink(`${l.base}/root-alias`, 'root')
      await allowed('writeText', 'new.txt', `${l.root}/new.txt`, { workspaceRoot: `${l.base}/root-alias` })
      const fs = sandbox({ workspaceRoot: `${l.base}/root-alias` })
      expect(await outcomeOf(fs.writeText(await fs.resolve('../outside/x.txt'), PAYLOAD))).toBe('FS_SANDBOX_DENIED')
      expect(await env.readFile(`${l.outside}/x.txt`)).toBe('outside secret\n')
    })
    it('accepts a relative workspace root (resolved against the backend cwd, the base)', async () => {
      await allowed('writeText', 'new.txt', `${get().l.root}/new.txt`, { workspaceRoot: 'root' })
      await allowed('editText', `${get().l.root}/inside.txt`, `${get().l.root}/inside.txt`, { workspaceRoot: 'root' })
    })
    it('mutates the fresh target: a forged key pointing outside is ignored', async () => {
      const { env, l } = get()
      const fs = sandbox()
      const forged = { targetKey: (await env.inner.resolve(`${l.outside}/x.txt`)).targetKey, displayPath: `${l.root}/inside.txt` }
      await fs.editText(forged, EDIT)
      expect(await env.readFile(`${l.root}/inside.txt`)).toBe('inside PWNED\n')
      expect(await env.readFile(`${l.outside}/x.txt`)).toBe('outside secret\n')
    })
    it('re-resolves a relative display path against the workspace root', async () => {
      const { env, l } = get()
      const before = await restOf(get(), [l.root])
      await sandbox().writeText({ targetKey: (await env.inner.resolve(`${l.outside}/x.txt`)).targetKey, displayPath: 'rel.txt' }, PAYLOAD)
      expect(await env.readFile(`${l.root}/rel.txt`)).toBe(PAYLOAD)
      expect(await restOf(get(), [l.root])).toEqual(before)
    })
    it('a link swapped inward between resolve and write lands the write inside', async () => {
      const { env, l } = get()
      const fs = sandbox()
      const target = await fs.resolve('link-out/x.txt')
      await env.remove(`${l.root}/link-out`)
      await env.symlink(`${l.root}/link-out`, 'sub')
      await fs.writeText(target, PAYLOAD)
      expect(await env.readFile(`${l.root}/sub/x.txt`)).toBe(PAYLOAD)
      expect(await env.readFile(`${l.outside}/x.txt`)).toBe('outside secret\n')
    })
    it('an extra root that cannot be resolved matches nothing and does not break the workspace', async () => {
      const { l } = get()
      const fs = sandbox({ writableRoots: [`${l.outside}/x.txt/not-a-dir`] })
      await allowed('writeText', 'new.txt', `${l.root}/new.txt`, { writableRoots: [`${l.outside}/x.txt/not-a-dir`] })
      expect(await outcomeOf(fs.writeText(await fs.resolve('../outside/x.txt'), PAYLOAD))).toBe('FS_SANDBOX_DENIED')
      expect(await get().env.readFile(`${l.outside}/x.txt`)).toBe('outside secret\n')
    })
    it('an aborted signal is FS_ABORTED, not a denial, and writes nothing', async () => {
      const fs = sandbox()
      const before = await snapshot(get().env, get().l.base)
      const signal = AbortSignal.abort()
      for (const path of ['new.txt', '../outside/x.txt']) {
        const target = await fs.resolve(path)
        expect(await outcomeOf(fs.writeText(target, PAYLOAD, { signal }))).toBe('FS_ABORTED')
        expect(await outcomeOf(fs.editText(target, EDIT, { signal }))).toBe('FS_ABORTED')
      }
      expect(await snapshot(get().env, get().l.base)).toEqual(before)
    })
  })

  describe('full-access mode', () => {
    const full = (): SandboxedFileSystem => sandbox({ mode: 'full-access' })
    const cases: readonly (readonly [Verb, string, (c: Ctx) => string])[] = [
      ['writeText', '../outside/x.txt', (c) => `${c.l.outside}/x.txt`],
      ['editText', '../outside/x.txt', (c) => `${c.l.outside}/x.txt`],
      ['writeText', 'link-out/new.txt', (c) => `${c.l.outside}/new.txt`],
      ['editText', 'file-link-out', (c) => `${c.l.outside}/x.txt`],
      ['writeText', '../root-evil/x.txt', (c) => `${c.l.evil}/x.txt`],
      ['editText', 'sub/../../top.txt', (c) => `${c.l.base}/top.txt`],
      ['writeText', 'inside.txt', (c) => `${c.l.root}/inside.txt`],
    ]
    for (const [verb, path, landsAt] of cases) {
      it(`allows ${verb} to ${path}`, async () => {
        const fs = full()
        const old = await get().env.readFile(landsAt(get()))
        await mutate(fs, verb, await fs.resolve(path))
        const text = await get().env.readFile(landsAt(get()))
        expect(text).toBe(verb === 'writeText' ? PAYLOAD : old?.replaceAll('secret', 'PWNED'))
        expect(text).toContain('PWNED')
      })
    }
    it('hands the root itself to the backend: FS_NOT_REGULAR_FILE, not a denial', async () => {
      const fs = full()
      expect(await outcomeOf(fs.writeText(await fs.resolve('.'), PAYLOAD))).toBe('FS_NOT_REGULAR_FILE')
    })
  })

  describe('read-only mode', () => {
    const paths = ['inside.txt', 'new.txt', 'sub/x.txt', 'link-in/x.txt', '../extra/e.txt', '../outside/x.txt', 'link-out/x.txt']
    for (const path of paths) {
      for (const verb of VERBS) {
        it(`denies ${verb} to ${path}`, async () => {
          const fs = sandbox({ mode: 'read-only', writableRoots: ['../extra'] })
          const before = await snapshot(get().env, get().l.base)
          expect(await outcomeOf(mutate(fs, verb, await fs.resolve(path)))).toBe('FS_SANDBOX_DENIED')
          expect(await snapshot(get().env, get().l.base)).toEqual(before)
        })
      }
    }
    it('allows every read, inside and outside the root, with confineReads: false', async () => {
      const fs = sandbox({ mode: 'read-only', confineReads: false })
      expect(await fs.readText(await fs.resolve('inside.txt'))).toBe('inside secret\n')
      expect(await fs.readText(await fs.resolve('../outside/x.txt'))).toBe('outside secret\n')
      expect(await fs.readText(await fs.resolve('file-link-out'))).toBe('outside secret\n')
      expect((await fs.stat(await fs.resolve('../outside/x.txt')))?.type).toBe('file')
      expect((await fs.lstat('file-link-out'))?.type).toBe('symlink')
      expect((await fs.listDir(await fs.resolve('../outside'))).map((e) => e.name)).toEqual(['sub', 'x.txt'])
      let streamed = ''
      for await (const chunk of await fs.streamText(await fs.resolve('link-out/x.txt'))) streamed += chunk
      expect(streamed).toBe('outside secret\n')
    })
  })

  describe('confineReads', () => {
    type Read = 'readText' | 'streamText' | 'stat' | 'listDir' | 'lstat'
    const read = async (fs: SandboxedFileSystem, op: Read, path: string): Promise<string> => {
      if (op === 'lstat') return outcomeOf(fs.lstat(path))
      const target = await fs.resolve(path)
      if (op === 'streamText') {
        return outcomeOf(
          (async () => {
            for await (const _ of await fs.streamText(target)) void _
          })(),
        )
      }
      return outcomeOf(fs[op](target))
    }
    const outside: readonly (readonly [Read, string])[] = [
      ['readText', '../outside/x.txt'],
      ['readText', 'link-out/x.txt'],
      ['readText', 'file-link-out'],
      ['readText', '../root-evil/x.txt'],
      ['streamText', '../top.txt'],
      ['stat', '../outside/x.txt'],
      ['stat', 'link-out'],
      ['listDir', '..'],
      ['listDir', 'link-out'],
      ['lstat', '../outside/x.txt'],
      ['lstat', 'link-out/x.txt'],
    ]
    const modes: readonly SandboxMode[] = ['workspace-write', 'read-only']
    for (const mode of modes) {
      for (const [op, path] of outside) {
        it(`${mode}: denies ${op} of ${path}`, async () => {
          expect(await read(sandbox({ mode, confineReads: true }), op, path)).toBe('FS_SANDBOX_DENIED')
        })
      }
      it(`${mode}: allows reads inside the root and the extra roots`, async () => {
        const fs = sandbox({ mode, confineReads: true, writableRoots: ['../extra'] })
        const inside: readonly (readonly [Read, string])[] = [
          ['readText', 'inside.txt'],
          ['readText', 'link-in/x.txt'],
          ['streamText', 'file-link-in'],
          ['stat', '.'],
          ['listDir', '.'],
          ['lstat', 'file-link-in'],
          // A link that lies inside may be looked at wherever it points: lstat does not follow it.
          ['lstat', 'file-link-out'],
          ['lstat', 'link-out'],
          ['readText', '../extra/e.txt'],
        ]
        for (const [op, path] of inside) expect(await read(fs, op, path), `${op} ${path}`).toBe('resolved')
      })
    }
    it('a path that fails to resolve outside the roots is a denial, not a hint of what exists there', async () => {
      const fs = sandbox()
      // Through a file outside: the backend would say FS_NOT_FOUND (a file on the way), which tells the file exists.
      for (const path of ['../outside/x.txt/y', '../top.txt/y/z', 'link-out/x.txt/y']) {
        expect(await outcomeOf(fs.resolve(path)), path).toBe('FS_SANDBOX_DENIED')
      }
      // Inside, the backend's own answer stays.
      expect(await outcomeOf(fs.resolve('inside.txt/y'))).toBe('FS_NOT_FOUND')
    })
    it('a listing shows a link leading out as `other`, without the outside target’s type, size, mtime or version', async () => {
      const leadingOut = ['chain-a', 'chain-b', 'file-link-evil', 'file-link-out', 'file-link-out-rel', 'link-evil', 'link-out', 'link-out-rel', 'link-parent']
      const listed = async (fs: SandboxedFileSystem, dir: string): Promise<Map<string, object>> =>
        new Map((await fs.listDir(await fs.resolve(dir))).map((e) => [e.name, e]))
      for (const mode of modes) {
        const fs = sandbox({ mode })
        const root = await listed(fs, '.')
        for (const name of leadingOut) {
          const entry = root.get(name) as { type: string } | undefined
          expect(entry?.type, name).toBe('other')
          expect(Object.keys(entry ?? {}).sort(), name).toEqual(['name', 'target', 'type'])
        }
        // Links that stay inside keep their target's type and metadata.
        expect(root.get('file-link-in')).toMatchObject({ type: 'file' })
        expect(root.get('link-in')).toMatchObject({ type: 'directory' })
        expect(root.get('link-root')).toMatchObject({ type: 'directory' })
        const sub = await listed(fs, 'sub')
        for (const name of ['deep-link', 'file-link-chain']) expect(Object.keys(sub.get(name) ?? {}).sort(), name).toEqual(['name', 'target', 'type'])
      }
      // Unconfined, a listing follows the links as the backend does.
      for (const fs of [sandbox({ confineReads: false }), sandbox({ mode: 'full-access' })]) {
        const root = await listed(fs, '.')
        expect(root.get('file-link-out')).toMatchObject({ type: 'file' })
        expect(root.get('link-out')).toMatchObject({ type: 'directory' })
      }
    })
    it('confines reads by default', async () => {
      for (const [op, path] of outside) expect(await read(sandbox(), op, path), `${op} ${path}`).toBe('FS_SANDBOX_DENIED')
    })
    it('lets reads pass everywhere with confineReads: false, and in full-access mode even with it', async () => {
      for (const fs of [sandbox({ confineReads: false }), sandbox({ mode: 'full-access', confineReads: true })]) {
        for (const [op, path] of outside) expect(await read(fs, op, path), `${op} ${path}`).toBe('resolved')
      }
    })
  })

  describe('protected paths', () => {
    const modes: readonly SandboxMode[] = ['workspace-write', 'full-access']
    for (const mode of modes) {
      it(`${mode}: .git (any case, at any depth, also via ..) and the protected paths are read-only; reads pass`, async () => {
        const { env, l } = get()
        const fs = sandbox({ mode, protectedPaths: ['inside.txt', 'sub'] })
        const before = await snapshot(env, l.base)
        const paths = ['.git/config', '.git/hooks/pre-commit', 'sub/.Git/x', 'a/.GIT', 'x/../.git/HEAD', 'inside.txt', 'sub/new.txt', './sub/../inside.txt']
        for (const path of paths) {
          for (const verb of VERBS) expect(await outcomeOf(mutate(fs, verb, await fs.resolve(path))), `${verb} ${path}`).toBe('FS_SANDBOX_DENIED')
        }
        expect(await snapshot(env, l.base)).toEqual(before)
        expect(await fs.readText(await fs.resolve('inside.txt'))).toBe('inside secret\n')
      })
      it(`${mode}: a symlink that aliases a protected path is caught by identity`, async () => {
        const fs = sandbox({ mode, protectedPaths: [`${get().l.root}/sub`] })
        const before = await snapshot(get().env, get().l.base)
        expect(await outcomeOf(mutate(fs, 'writeText', await fs.resolve('link-in/new.txt')))).toBe('FS_SANDBOX_DENIED')
        expect(await snapshot(get().env, get().l.base)).toEqual(before)
      })
    }
    it('a protected name reached through a link (link-in -> sub) is caught on the canonical target', async () => {
      const fs = sandbox({ mode: 'full-access', protectedNames: ['sub'] })
      const before = await snapshot(get().env, get().l.base)
      for (const verb of VERBS) expect(await outcomeOf(mutate(fs, verb, await fs.resolve('link-in/x.txt')))).toBe('FS_SANDBOX_DENIED')
      expect(await snapshot(get().env, get().l.base)).toEqual(before)
    })
    for (const mode of modes) {
      it(`${mode}: remove, rename (either end) and createDirectory cannot touch .git or a protected path, nor take one away inside a directory`, async () => {
        const { env, l } = get()
        await env.mkdir(`${l.root}/repo/.git`)
        await env.writeFile(`${l.root}/repo/.git/HEAD`, 'ref secret\n')
        await env.writeFile(`${l.root}/repo/src.txt`, 'src secret\n')
        const fs = sandbox({ mode, protectedPaths: ['sub', 'repo/src.txt'] })
        const before = await snapshot(env, l.base)
        const at = (path: string): Promise<import('@seamfs/core').FsTarget> => fs.resolve(path)
        const attempts: Record<string, () => Promise<unknown>> = {
          'remove repo/.git/HEAD': async () => fs.remove(await at('repo/.git/HEAD')),
          'remove repo recursively (holds .git)': async () => fs.remove(await at('repo'), { recursive: true }),
          'remove sub/x.txt (under a protected path)': async () => fs.remove(await at('sub/x.txt')),
          'rename repo/.git away': async () => fs.rename(await at('repo/.git'), await at('git-moved')),
          'rename a file into .git': async () => fs.rename(await at('inside.txt'), await at('repo/.git/hooks/pre-commit')),
          'rename the protected sub away': async () => fs.rename(await at('sub'), await at('sub2')),
          'rename repo away (it holds a protected path)': async () => fs.rename(await at('repo'), await at('elsewhere')),
          'createDirectory .git/hooks': async () => fs.createDirectory(await at('.git/hooks')),
        }
        for (const [label, attempt] of Object.entries(attempts)) expect(await outcomeOf(attempt()), label).toBe('FS_SANDBOX_DENIED')
        expect(await snapshot(env, l.base)).toEqual(before)
      })
    }
    it('remove, rename and createDirectory inside the root work, and a rename out of or into the outside is denied', async () => {
      const { env, l } = get()
      const fs = sandbox()
      await fs.rename(await fs.resolve('inside.txt'), await fs.resolve('sub/renamed.txt'))
      expect(await env.readFile(`${l.root}/sub/renamed.txt`)).toBe('inside secret\n')
      expect(await env.readFile(`${l.root}/inside.txt`)).toBeUndefined()
      await fs.remove(await fs.resolve('sub/renamed.txt'))
      expect(await env.readFile(`${l.root}/sub/renamed.txt`)).toBeUndefined()
      expect(await fs.createDirectory(await fs.resolve('made/deep'))).toEqual({ created: true })
      const before = await snapshot(env, l.base)
      expect(await outcomeOf(fs.rename(await fs.resolve('sub/x.txt'), await fs.resolve('link-out/stolen.txt')))).toBe('FS_SANDBOX_DENIED')
      expect(await outcomeOf(fs.rename(await fs.resolve('link-out/x.txt'), await fs.resolve('taken.txt')))).toBe('FS_SANDBOX_DENIED')
      expect(await snapshot(env, l.base)).toEqual(before)
    })
    it('protectedNames: [] turns the name check off; a name only matches a whole segment', async () => {
      await allowed('writeText', '.git/new.txt', `${get().l.root}/.git/new.txt`, { protectedNames: [] })
      await allowed('writeText', 'my.git/new.txt', `${get().l.root}/my.git/new.txt`)
    })
  })

  describe('construction', () => {
    it('rejects an unknown mode and a blank workspace root', () => {
      const inner = get().env.inner
      expect(() => new SandboxedFileSystem(inner, { mode: 'danger' as SandboxMode, workspaceRoot: '/w' })).toThrow(TypeError)
      expect(() => new SandboxedFileSystem(inner, { mode: 'read-only', workspaceRoot: '  ' })).toThrow(TypeError)
    })
  })
}
