import { expect } from 'vitest'
import { FsVersion, type FsRemoveOutcome } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'

const OTHER = { version: FsVersion('not-a-version') }
const BOUND = 5

/** What a path is now: its content, `dir`, or `absent`. */
async function state(env: Env, path: string): Promise<string> {
  const info = await env.fs.stat(await env.resolve(path))
  if (info === undefined) return 'absent'
  return info.type === 'file' ? await env.read(path) : info.type
}

/** `remove`: files, empty directories and bounded trees, guarded like every mutation. */
export function removeClauses(kit: Kit): void {
  kit.group('remove', { caps: ['remove'] }, () => {
    kit.test('remove of a file: stat is undefined after, the listing no longer shows it, the outcome says file, 1 entry', async (env) => {
      await env.write('d/a.txt', 'a')
      await env.write('d/b.txt', 'b')
      const outcome = await env.fs.remove(await env.resolve('d/a.txt'))
      expect(outcome).toEqual<FsRemoveOutcome>({ type: 'file', entries: 1 })
      expect(await env.fs.stat(await env.resolve('d/a.txt'))).toBeUndefined()
      expect(await env.names('d')).toEqual(['b.txt'])
    })

    kit.test('remove of a missing target is FS_NOT_FOUND, and FS_STALE_VERSION when guarded', async (env) => {
      const t = await env.resolve('missing.txt')
      expect(await codeOf(env.fs.remove(t))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.remove(t, { expected: OTHER }))).toBe('FS_STALE_VERSION')
    })

    kit.test('a guarded remove takes only the expected version: another one is FS_STALE_VERSION and the file stays', async (env) => {
      const first = await env.write('g.txt', 'one')
      const second = await env.write('g.txt', 'two')
      const t = await env.resolve('g.txt')
      expect(await codeOf(env.fs.remove(t, { expected: { version: first.version } }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.remove(t, { expected: OTHER }))).toBe('FS_STALE_VERSION')
      expect(await state(env, 'g.txt')).toBe('two')
      expect((await env.fs.remove(t, { expected: { version: second.version } })).type).toBe('file')
      expect(await state(env, 'g.txt')).toBe('absent')
    })

    kit.test('a version of a removed file never guards its re-creation', async (env) => {
      const gone = await env.write('r.txt', 'old')
      await env.fs.remove(await env.resolve('r.txt'))
      await env.write('r.txt', 'new content')
      const t = await env.resolve('r.txt')
      expect(await codeOf(env.fs.writeText(t, 'x', { expected: { kind: 'replaceIfVersion', version: gone.version } }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.remove(t, { expected: { version: gone.version } }))).toBe('FS_STALE_VERSION')
      expect(await state(env, 'r.txt')).toBe('new content')
    })

    kit.test('a malformed expected or recursive is FS_UNSUPPORTED and removes nothing', async (env) => {
      await env.write('m.txt', 'keep')
      const t = await env.resolve('m.txt')
      for (const opts of [{ expected: 'v' }, { expected: { version: 1 } }, { expected: null }, { recursive: 'yes' }, { recursive: 1 }]) {
        expect(await codeOf(env.fs.remove(t, opts as never)), JSON.stringify(opts)).toBe('FS_UNSUPPORTED')
      }
      expect(await state(env, 'm.txt')).toBe('keep')
    })

    kit.test('a directory with entries is FS_NOT_EMPTY without recursive, guarded or not, and nothing is removed', async (env) => {
      await env.write('full/f.txt', 'f')
      const dir = await env.resolve('full')
      expect(await codeOf(env.fs.remove(dir))).toBe('FS_NOT_EMPTY')
      const version = (await env.fs.stat(dir))?.version ?? OTHER.version
      expect(await codeOf(env.fs.remove(dir, { expected: { version } }))).toBe('FS_NOT_EMPTY')
      expect(await state(env, 'full/f.txt')).toBe('f')
    })

    kit.test(
      'a guarded remove of a directory: its own version removes it, another is FS_STALE_VERSION, and a file that took its place is never removed',
      async (env) => {
        await env.write('d/f.txt', 'f')
        const dir = await env.resolve('d')
        expect(await codeOf(env.fs.remove(dir, { expected: OTHER, recursive: true }))).toBe('FS_STALE_VERSION')
        expect(await state(env, 'd/f.txt')).toBe('f')
        const version = (await env.fs.stat(dir))?.version ?? OTHER.version
        expect((await env.fs.remove(dir, { expected: { version }, recursive: true })).type).toBe('directory')
        expect(await state(env, 'd')).toBe('absent')
        // A caller saw a directory; someone put a file there since: the file is not the caller's to remove.
        await env.write('swap/x.txt', 'x')
        const seen = (await env.fs.stat(await env.resolve('swap')))?.version ?? OTHER.version
        await env.fs.remove(await env.resolve('swap'), { recursive: true })
        await env.write('swap', 'a file now')
        expect(await codeOf(env.fs.remove(await env.resolve('swap'), { expected: { version: seen } }))).toBe('FS_STALE_VERSION')
        expect(await state(env, 'swap')).toBe('a file now')
      },
    )

    kit.test('recursive removes a tree of directories and files; the outcome says directory and counts the entries', async (env) => {
      for (const path of ['t/a.txt', 't/b/c.txt', 't/b/d/e.txt', 'keep/t.txt']) await env.write(path, path)
      const outcome = await env.fs.remove(await env.resolve('t'), { recursive: true })
      expect(outcome.type).toBe('directory')
      // 3 files; where directories exist on their own, t, t/b and t/b/d count too.
      expect(outcome.entries).toBe(kit.caps.emptyDirectories ? 6 : outcome.entries)
      expect(outcome.entries).toBeGreaterThanOrEqual(3)
      expect(await state(env, 't')).toBe('absent')
      expect(await state(env, 't/b/c.txt')).toBe('absent')
      expect(await env.names()).toEqual(['keep'])
    })

    kit.test(
      'a recursive remove of more than maxRemoveEntries entries is FS_TOO_LARGE (details.entries) and removes nothing',
      async (env) => {
        expect(env.fs.maxRemoveEntries, 'create(context) must pass context.limits to the backend constructor').toBe(BOUND)
        const files = Array.from({ length: BOUND + 1 }, (_, i) => `big/f${i}.txt`)
        for (const path of files) await env.write(path, 'x')
        const error = await env.fs.remove(await env.resolve('big'), { recursive: true }).then(
          () => undefined,
          (err: unknown) => err as { code?: string; details?: { entries?: number } },
        )
        expect(error?.code).toBe('FS_TOO_LARGE')
        expect(error?.details?.entries ?? 0).toBeGreaterThan(BOUND)
        expect((await env.names('big')).length).toBe(BOUND + 1)
        const fits = files.slice(0, BOUND - 1).map((path) => path.replace('big/', 'small/'))
        for (const path of fits) await env.write(path, 'x')
        expect((await env.fs.remove(await env.resolve('small'), { recursive: true })).type).toBe('directory')
      },
      undefined,
      { limits: { maxRemoveEntries: BOUND } },
    )

    kit.test('of N concurrent guarded removers of one version exactly one wins; the others are FS_STALE_VERSION', async (env) => {
      const { version } = await env.write('race.txt', 'x')
      const t = await env.resolve('race.txt')
      const codes = await Promise.all(Array.from({ length: kit.tuning.raceWriters }, () => codeOf(env.fs.remove(t, { expected: { version } }))))
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
      expect(
        codes.every((c) => c === 'ok' || c === 'FS_STALE_VERSION'),
        codes.join(', '),
      ).toBe(true)
      expect(await state(env, 'race.txt')).toBe('absent')
    })

    kit.test('a guarded remove racing a guarded writer: exactly one of them wins', async (env) => {
      const { version } = await env.write('rw.txt', 'v1')
      const t = await env.resolve('rw.txt')
      const [removed, written] = await Promise.all([
        codeOf(env.fs.remove(t, { expected: { version } })),
        codeOf(env.fs.writeText(t, 'v2', { expected: { kind: 'replaceIfVersion', version } })),
      ])
      expect(
        [removed, written].filter((c) => c === 'ok'),
        `remove ${removed}, write ${written}`,
      ).toHaveLength(1)
      expect(await state(env, 'rw.txt')).toBe(removed === 'ok' ? 'absent' : 'v2')
    })

    kit.test('remove with an aborted signal is FS_ABORTED and removes nothing', async (env) => {
      await env.write('ab.txt', 'x')
      const controller = new AbortController()
      controller.abort(new Error('aborted by the test'))
      expect(await codeOf(env.fs.remove(await env.resolve('ab.txt'), { signal: controller.signal }))).toBe('FS_ABORTED')
      expect(await state(env, 'ab.txt')).toBe('x')
    })
  })

  kit.group('remove: empty directories', { caps: ['remove', 'createDirectory'] }, () => {
    kit.test('an empty directory is removed (type directory, 1 entry) and no longer listed', async (env) => {
      await env.fs.createDirectory(await env.resolve('e/empty'))
      expect(await env.fs.remove(await env.resolve('e/empty'))).toEqual<FsRemoveOutcome>({ type: 'directory', entries: 1 })
      expect(await state(env, 'e/empty')).toBe('absent')
      expect(await env.names()).not.toContain('empty')
    })
  })

  kit.group('remove: symlinks', { caps: ['remove', 'symlinks'], hooks: ['symlink'] }, () => {
    kit.test('remove of a target reached through a link removes the file it names; the link stays', async (env) => {
      await env.write('real.txt', 'real')
      await env.symlink('link.txt', 'real.txt')
      await env.fs.remove(await env.resolve('link.txt'))
      expect(await state(env, 'real.txt')).toBe('absent')
      expect((await env.fs.lstat('link.txt'))?.type).toBe('symlink')
    })

    kit.test('a recursive remove removes links inside the tree and never follows them', async (env) => {
      await env.write('outside/keep.txt', 'keep')
      await env.write('tree/own.txt', 'own')
      await env.symlink('tree/to-dir', '../outside')
      await env.symlink('tree/to-file', '../outside/keep.txt')
      await env.fs.remove(await env.resolve('tree'), { recursive: true })
      expect(await state(env, 'tree')).toBe('absent')
      expect(await state(env, 'outside/keep.txt')).toBe('keep')
    })
  })
}
