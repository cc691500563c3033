import { expect } from 'vitest'
import { isFsError, type FsVersion } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'

async function versionOf(env: Env, path: string): Promise<FsVersion | undefined> {
  return (await env.fs.stat(await env.resolve(path)))?.version
}

/** Settles every promise and tallies fulfilled results and error codes. */
async function tally(promises: readonly Promise<unknown>[]): Promise<{ won: number[]; codes: string[] }> {
  const settled = await Promise.allSettled(promises)
  const won: number[] = []
  const codes: string[] = []
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') won.push(i)
    else codes.push(isFsError(s.reason) ? s.reason.code : `raw: ${String(s.reason)}`)
  })
  return { won, codes }
}

/** Larger than any sampling window a version might hash (64 KiB, 256 KiB), and than local stream chunks. */
const FAR_FILE_BYTES = 300 * 1024

/** ASCII lines of {@link FAR_FILE_BYTES} bytes, each change putting its character at its offset (negative: from the end). */
function farText(changes: ReadonlyArray<readonly [offset: number, char: string]> = []): string {
  const chars = 'line of text 0123456789\n'
    .repeat(Math.ceil(FAR_FILE_BYTES / 24))
    .slice(0, FAR_FILE_BYTES)
    .split('')
  for (const [offset, char] of changes) chars[offset < 0 ? FAR_FILE_BYTES + offset : offset] = char
  return chars.join('')
}

export function versionClauses(kit: Kit): void {
  kit.group('versions', {}, () => {
    kit.test('an unchanged file keeps its version across stats and reads', async (env) => {
      const { version } = await env.write('v.txt', 'steady')
      for (let i = 0; i < 3; i++) {
        await env.read('v.txt')
        expect(await versionOf(env, 'v.txt')).toBe(version)
      }
    })

    kit.test('every content change makes a new version, also at the same size in quick succession', async (env) => {
      const seen = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const { version } = await env.write('v.txt', `content-${String(i).padStart(2, '0')}`)
        expect(seen.has(version)).toBe(false)
        seen.add(version)
      }
    })

    kit.test('a same-size change far from the head of a large file (its last byte, its middle) makes a new version', async (env) => {
      const contents = [farText(), farText([[-1, 'X']]), farText([[FAR_FILE_BYTES >> 1, 'X']]), farText([[-2, 'Y']])]
      const versions: string[] = []
      for (const content of contents) {
        const { version } = await env.write('far.txt', content)
        expect(await versionOf(env, 'far.txt')).toBe(version)
        versions.push(version)
      }
      expect(new Set(versions).size, `versions of ${contents.length} same-size contents: ${versions.join(', ')}`).toBe(contents.length)
    })
  })

  kit.group('versions: external changes', { writes: true, hooks: ['writeBytes'] }, () => {
    kit.test('an external same-size rewrite changes the version and makes guards stale', async (env) => {
      for (let i = 0; i < 10; i++) {
        const { version } = await env.write('x.txt', `aaaa${i}`)
        await env.writeBytes('x.txt', `bbbb${i}`)
        expect(await versionOf(env, 'x.txt')).not.toBe(version)
        const t = await env.resolve('x.txt')
        expect(await codeOf(env.fs.writeText(t, 'mine', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
        const edit = { oldString: 'bbbb', newString: 'cccc', replaceAll: false }
        expect(await codeOf(env.fs.editText(t, edit, { expected: { version } }))).toBe('FS_STALE_VERSION')
        expect(await env.read('x.txt')).toBe(`bbbb${i}`)
      }
    })
  })

  kit.group('versions: external changes far from the head', { writes: true, hooks: ['writeBytes'] }, () => {
    kit.test('an external same-size change far from the head of a large file (its last byte, its middle) changes the version', async (env) => {
      const { version: written } = await env.write('far.txt', farText())
      const seen = [written]
      for (const content of [farText([[-1, 'X']]), farText([[FAR_FILE_BYTES >> 1, 'X']])]) {
        await env.writeBytes('far.txt', content)
        const version = await versionOf(env, 'far.txt')
        expect(version).toBeDefined()
        expect(seen, 'the versions before this external change').not.toContain(version)
        seen.push(version as FsVersion)
        expect(await env.read('far.txt')).toBe(content)
      }
      const t = await env.resolve('far.txt')
      expect(await codeOf(env.fs.writeText(t, 'mine', { expected: { kind: 'replaceIfVersion', version: written } }))).toBe('FS_STALE_VERSION')
      const edit = { oldString: 'X', newString: 'Z', replaceAll: false }
      expect(await codeOf(env.fs.editText(t, edit, { expected: { version: seen[1] as FsVersion } }))).toBe('FS_STALE_VERSION')
      expect(await env.read('far.txt')).toBe(farText([[FAR_FILE_BYTES >> 1, 'X']]))
    })
  })

  kit.group('versions: external delete', { writes: true, hooks: ['remove'] }, () => {
    kit.test('after an external delete, stat is undefined and guarded writes are stale', async (env) => {
      const { version } = await env.write('gone.txt', 'here')
      await env.remove('gone.txt')
      const t = await env.resolve('gone.txt')
      expect(await env.fs.stat(t)).toBeUndefined()
      expect(await codeOf(env.fs.writeText(t, 'x', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
      expect(await env.fs.stat(t)).toBeUndefined()
    })
  })

  kit.group('CAS races', { writes: true }, () => {
    kit.test('N concurrent replaceIfVersion writers from one version: exactly one wins', async (env) => {
      const n = kit.tuning.raceWriters
      const { version } = await env.write('race.txt', 'base')
      const t = await env.resolve('race.txt')
      const { won, codes } = await tally(
        Array.from({ length: n }, (_, i) => env.fs.writeText(t, `writer ${i}`, { expected: { kind: 'replaceIfVersion', version } })),
      )
      expect(won.length).toBe(1)
      expect(codes).toEqual(Array(n - 1).fill('FS_STALE_VERSION'))
      expect(await env.read('race.txt')).toBe(`writer ${won[0]}`)
    })

    kit.test('N concurrent createIfAbsent writers: exactly one creates', async (env) => {
      const n = kit.tuning.raceWriters
      const t = await env.resolve('create-race.txt')
      const { won, codes } = await tally(Array.from({ length: n }, (_, i) => env.fs.writeText(t, `creator ${i}`, { expected: { kind: 'createIfAbsent' } })))
      expect(won.length).toBe(1)
      expect(codes).toEqual(Array(n - 1).fill('FS_NOT_OBSERVED'))
      expect(await env.read('create-race.txt')).toBe(`creator ${won[0]}`)
    })

    kit.test('N concurrent guarded edits from one version: exactly one wins, the rest are stale', async (env) => {
      const n = kit.tuning.raceWriters
      const { version } = await env.write('edit-race.txt', 'value: base')
      const t = await env.resolve('edit-race.txt')
      const { won, codes } = await tally(
        Array.from({ length: n }, (_, i) => env.fs.editText(t, { oldString: 'base', newString: `edit ${i}`, replaceAll: false }, { expected: { version } })),
      )
      expect(won.length).toBe(1)
      expect(codes).toEqual(Array(n - 1).fill('FS_STALE_VERSION'))
      expect(await env.read('edit-race.txt')).toBe(`value: edit ${won[0]}`)
    })

    kit.test('a guarded write racing a guarded edit from one version: one wins, one is stale', async (env) => {
      const { version } = await env.write('mixed.txt', 'base')
      const t = await env.resolve('mixed.txt')
      const { won, codes } = await tally([
        env.fs.writeText(t, 'written', { expected: { kind: 'replaceIfVersion', version } }),
        env.fs.editText(t, { oldString: 'base', newString: 'edited', replaceAll: false }, { expected: { version } }),
      ])
      expect(won.length).toBe(1)
      expect(codes).toEqual(['FS_STALE_VERSION'])
      expect(await env.read('mixed.txt')).toBe(won[0] === 0 ? 'written' : 'edited')
    })
  })
}
