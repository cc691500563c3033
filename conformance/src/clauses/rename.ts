import { expect } from 'vitest'
import { FsVersion, type FsRenameOutcome } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Env, type Kit } from '../kit.js'

const OTHER = { version: FsVersion('not-a-version') }

/** What a path is now: its content, `directory`, or `absent`. */
async function state(env: Env, path: string): Promise<string> {
  const info = await env.fs.stat(await env.resolve(path))
  if (info === undefined) return 'absent'
  return info.type === 'file' ? await env.read(path) : info.type
}

async function move(env: Env, from: string, to: string, opts?: Parameters<Env['fs']['rename']>[2]): Promise<FsRenameOutcome> {
  return env.fs.rename(await env.resolve(from), await env.resolve(to), opts)
}

/** `rename`: no overwrite unless asked, guards on both ends, never a moment where neither name holds the file. */
export function renameClauses(kit: Kit): void {
  kit.group('rename', { caps: ['rename'] }, () => {
    kit.test('rename moves a file: to holds the content, from is gone, the outcome version equals the next stat of to', async (env) => {
      await env.write('a.txt', 'content')
      const outcome = await move(env, 'a.txt', 'b.txt')
      expect(outcome).toEqual<FsRenameOutcome>({ type: 'file', replaced: false, version: outcome.version })
      expect(await state(env, 'a.txt')).toBe('absent')
      expect(await state(env, 'b.txt')).toBe('content')
      expect((await env.fs.stat(await env.resolve('b.txt')))?.version).toBe(outcome.version)
      expect(await env.names()).toEqual(['b.txt'])
    })

    kit.test('rename creates the missing parents of to', async (env) => {
      await env.write('a.txt', 'x')
      await move(env, 'a.txt', 'new/deep/b.txt')
      expect(await state(env, 'new/deep/b.txt')).toBe('x')
    })

    kit.test('an existing to is FS_NOT_OBSERVED without overwrite, and both files stay as they were', async (env) => {
      await env.write('a.txt', 'a')
      await env.write('b.txt', 'b')
      for (const overwrite of [undefined, false]) expect(await codeOf(move(env, 'a.txt', 'b.txt', { overwrite }))).toBe('FS_NOT_OBSERVED')
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['a', 'b'])
    })

    kit.test('overwrite: true replaces a file at to (replaced: true)', async (env) => {
      await env.write('a.txt', 'a')
      await env.write('b.txt', 'b')
      const outcome = await move(env, 'a.txt', 'b.txt', { overwrite: true })
      expect(outcome.replaced).toBe(true)
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['absent', 'a'])
      expect((await env.fs.stat(await env.resolve('b.txt')))?.version).toBe(outcome.version)
    })

    kit.test('overwrite: { version } replaces only that version of to; another one is FS_STALE_VERSION and nothing changes', async (env) => {
      await env.write('a.txt', 'a')
      const first = await env.write('b.txt', 'b1')
      const second = await env.write('b.txt', 'b2')
      expect(await codeOf(move(env, 'a.txt', 'b.txt', { overwrite: { version: first.version } }))).toBe('FS_STALE_VERSION')
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['a', 'b2'])
      expect((await move(env, 'a.txt', 'b.txt', { overwrite: { version: second.version } })).replaced).toBe(true)
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['absent', 'a'])
    })

    kit.test('a missing to is created whatever overwrite says', async (env) => {
      for (const [i, overwrite] of [true, false, OTHER].entries()) {
        await env.write(`s${i}.txt`, `s${i}`)
        expect((await move(env, `s${i}.txt`, `d${i}.txt`, { overwrite })).replaced).toBe(false)
        expect(await state(env, `d${i}.txt`)).toBe(`s${i}`)
      }
    })

    kit.test('expected moves only that version of from; another one is FS_STALE_VERSION and nothing changes', async (env) => {
      const first = await env.write('a.txt', 'one')
      const second = await env.write('a.txt', 'two')
      expect(await codeOf(move(env, 'a.txt', 'b.txt', { expected: { version: first.version } }))).toBe('FS_STALE_VERSION')
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['two', 'absent'])
      await move(env, 'a.txt', 'b.txt', { expected: { version: second.version } })
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['absent', 'two'])
    })

    kit.test('a missing from is FS_NOT_FOUND, and FS_STALE_VERSION when guarded; nothing is created', async (env) => {
      expect(await codeOf(move(env, 'nope.txt', 'b.txt'))).toBe('FS_NOT_FOUND')
      expect(await codeOf(move(env, 'nope.txt', 'b.txt', { expected: OTHER }))).toBe('FS_STALE_VERSION')
      expect(await env.names()).toEqual([])
    })

    kit.test('a directory at to is never replaced: FS_NOT_OBSERVED, or FS_NOT_REGULAR_FILE with overwrite', async (env) => {
      await env.write('a.txt', 'a')
      await env.write('dir/inside.txt', 'inside')
      expect(await codeOf(move(env, 'a.txt', 'dir'))).toBe('FS_NOT_OBSERVED')
      expect(await codeOf(move(env, 'a.txt', 'dir', { overwrite: true }))).toBe('FS_NOT_REGULAR_FILE')
      expect([await state(env, 'a.txt'), await state(env, 'dir/inside.txt')]).toEqual(['a', 'inside'])
      if (kit.caps.createDirectory !== undefined) {
        // An empty directory is a directory too: never cleared to make room.
        await env.fs.createDirectory(await env.resolve('empty'))
        expect(await codeOf(move(env, 'a.txt', 'empty')), 'onto an empty directory').toBe('FS_NOT_OBSERVED')
        expect(await codeOf(move(env, 'a.txt', 'empty', { overwrite: true })), 'onto an empty directory, overwrite: true').toBe('FS_NOT_REGULAR_FILE')
        expect((await env.fs.stat(await env.resolve('empty')))?.type).toBe('directory')
        expect(await state(env, 'a.txt')).toBe('a')
      }
    })

    kit.test('a malformed expected or overwrite is FS_UNSUPPORTED and nothing changes', async (env) => {
      await env.write('a.txt', 'a')
      for (const opts of [{ expected: 'v' }, { expected: null }, { overwrite: 'yes' }, { overwrite: { version: 2 } }, { overwrite: null }]) {
        expect(await codeOf(move(env, 'a.txt', 'b.txt', opts as never)), JSON.stringify(opts)).toBe('FS_UNSUPPORTED')
      }
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['a', 'absent'])
    })

    kit.test('from and to naming one file change nothing and report the current version', async (env) => {
      const { version } = await env.write('d/a.txt', 'a')
      const outcome = await move(env, 'd/a.txt', 'd/../d/./a.txt')
      expect(outcome).toEqual<FsRenameOutcome>({ type: 'file', replaced: false, version })
      expect(await codeOf(move(env, 'd/a.txt', 'd/a.txt', { expected: OTHER }))).toBe('FS_STALE_VERSION')
      expect(await state(env, 'd/a.txt')).toBe('a')
    })

    kit.test('a directory moved into itself is FS_UNSUPPORTED and nothing changes', async (env) => {
      await env.write('d/f.txt', 'f')
      expect(await codeOf(move(env, 'd', 'd/sub/d'))).toBe('FS_UNSUPPORTED')
      expect(await env.names('d')).toEqual(['f.txt'])
    })

    kit.test('rename with an aborted signal is FS_ABORTED and nothing changes', async (env) => {
      await env.write('a.txt', 'a')
      const controller = new AbortController()
      controller.abort(new Error('aborted by the test'))
      expect(await codeOf(move(env, 'a.txt', 'b.txt', { signal: controller.signal }))).toBe('FS_ABORTED')
      expect([await state(env, 'a.txt'), await state(env, 'b.txt')]).toEqual(['a', 'absent'])
    })

    kit.test('of N concurrent renamers of one version to different names exactly one wins; the file is under exactly one name', async (env) => {
      const { version } = await env.write('src.txt', 'payload')
      const n = kit.tuning.raceWriters
      const codes = await Promise.all(Array.from({ length: n }, (_, i) => codeOf(move(env, 'src.txt', `dst${i}.txt`, { expected: { version } }))))
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
      expect(
        codes.every((c) => c === 'ok' || c === 'FS_STALE_VERSION' || c === 'FS_NOT_FOUND'),
        codes.join(', '),
      ).toBe(true)
      expect(await env.names()).toEqual([`dst${codes.indexOf('ok')}.txt`])
      expect(await state(env, `dst${codes.indexOf('ok')}.txt`)).toBe('payload')
    })

    kit.test('of N concurrent renamers of different files to one new name exactly one wins; no source is lost', async (env) => {
      const n = kit.tuning.raceWriters
      for (let i = 0; i < n; i++) await env.write(`s${i}.txt`, `s${i}`)
      const codes = await Promise.all(Array.from({ length: n }, (_, i) => codeOf(move(env, `s${i}.txt`, 'one.txt'))))
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
      expect(
        codes.every((c) => c === 'ok' || c === 'FS_NOT_OBSERVED'),
        codes.join(', '),
      ).toBe(true)
      const winner = codes.indexOf('ok')
      expect(await state(env, 'one.txt')).toBe(`s${winner}`)
      for (let i = 0; i < n; i++) if (i !== winner) expect(await state(env, `s${i}.txt`)).toBe(`s${i}`)
    })

    kit.test(
      'a reader polling both names while a file is moved never finds neither, nor a partial content',
      async (env) => {
        const rounds = Math.max(5, Math.min(40, Math.floor(kit.tuning.atomicityWrites / 3)))
        const problems: string[] = []
        for (let round = 0; round < rounds && problems.length === 0; round++) {
          const content = `round ${round} `.repeat(2000)
          await env.write('a.txt', content)
          let moving = true
          const to = `b${round}.txt`
          const mover = move(env, 'a.txt', to).finally(() => {
            moving = false
          })
          let polls = 0
          while (moving && polls < 1000 && problems.length === 0) {
            polls++
            const [a, b] = [await readOrNone(env, 'a.txt'), await readOrNone(env, to)]
            // `a` is read first: once it is gone, the move has happened, so `b` must be there.
            if (a === undefined && b === undefined) problems.push(`round ${round}: neither name held the file`)
            for (const seen of [a, b]) if (seen !== undefined && seen !== content) problems.push(`round ${round}: a read of ${seen.length} characters`)
            await yieldToLoop()
          }
          await mover
          expect([await state(env, 'a.txt'), await state(env, to)]).toEqual(['absent', content])
        }
        expect(problems).toEqual([])
      },
      kit.tuning.timeoutMs * 2,
    )
  })

  kit.group('rename: permissions', { caps: ['rename', 'permissions'], hooks: ['chmod', 'mode'] }, () => {
    kit.test('a moved file keeps its mode', async (env) => {
      await env.write('a.sh', 'run')
      await env.chmod('a.sh', 0o750)
      await move(env, 'a.sh', 'bin/b.sh')
      expect(await env.mode('bin/b.sh')).toBe(0o750)
    })
  })

  kit.group('rename: directories', { caps: ['rename'] }, () => {
    kit.test('a directory moves with its content where renameDirectories; elsewhere it is FS_UNSUPPORTED and nothing changes', async (env) => {
      await env.write('d/x.txt', 'x')
      await env.write('d/sub/y.txt', 'y')
      if (kit.caps.renameDirectories === true) {
        expect((await move(env, 'd', 'e/moved')).type).toBe('directory')
        expect([await state(env, 'd'), await state(env, 'e/moved/x.txt'), await state(env, 'e/moved/sub/y.txt')]).toEqual(['absent', 'x', 'y'])
        // A directory never replaces anything, and a guard names a file's version.
        await env.write('f.txt', 'f')
        const version = (await env.fs.stat(await env.resolve('e/moved')))?.version ?? OTHER.version
        expect(await codeOf(move(env, 'e/moved', 'f.txt')), 'onto a file').toBe('FS_NOT_OBSERVED')
        expect(await codeOf(move(env, 'e/moved', 'f.txt', { overwrite: true })), 'onto a file, with overwrite').toBe('FS_UNSUPPORTED')
        expect(await codeOf(move(env, 'e/moved', 'e2', { expected: OTHER })), 'a directory move guarded by another version').toBe('FS_STALE_VERSION')
        expect([await state(env, 'f.txt'), await state(env, 'e/moved/x.txt'), await state(env, 'e2')]).toEqual(['f', 'x', 'absent'])
        expect((await move(env, 'e/moved', 'e2', { expected: { version } })).type, 'guarded by its own version').toBe('directory')
        expect(await state(env, 'e2/x.txt')).toBe('x')
      } else {
        expect(await codeOf(move(env, 'd', 'e/moved'))).toBe('FS_UNSUPPORTED')
        expect([await state(env, 'd/x.txt'), await state(env, 'e')]).toEqual(['x', 'absent'])
      }
    })
  })
}

async function readOrNone(env: Env, path: string): Promise<string | undefined> {
  try {
    return await env.read(path)
  } catch (err) {
    if ((err as { code?: unknown }).code === 'FS_NOT_FOUND') return undefined
    throw err
  }
}
