import { expect } from 'vitest'
import { FsVersion, type FsBytesWriteOutcome } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Kit } from '../kit.js'
import { expectSameBytes } from './fixtures.js'

/** Every byte value, a BOM, a NUL and a truncated UTF-8 sequence: nothing a text path would keep. */
const BINARY = Uint8Array.from([0xef, 0xbb, 0xbf, 0, 1, 2, 0xff, 0xfe, 0x0d, 0x0a, ...Array.from({ length: 256 }, (_, i) => i), 0xe4, 0xb8])
const LIMIT = 4096

/** `readBytes`/`writeBytes`: binary content under the same guards and atomicity as text, and `mtime`. */
export function byteClauses(kit: Kit): void {
  kit.group('bytes', { writes: true }, () => {
    kit.test('writeBytes stores the bytes exactly; readBytes returns them (BOM, NUL and invalid UTF-8 included)', async (env) => {
      const t = await env.resolve('bin/blob.dat')
      const outcome = await env.fs.writeBytes(t, BINARY)
      expect(outcome.operation).toBe('create')
      expectSameBytes(await env.fs.readBytes(t), BINARY, 'readBytes')
      expect(await codeOf(env.fs.readText(t)), 'a NUL in the first 8192 bytes').toBe('FS_NOT_TEXT')
      expect((await env.fs.stat(t))?.size).toBe(BINARY.length)
    })

    kit.test('writeBytes: the outcome says create then update, its version equals the next stat, and text reads see the bytes', async (env) => {
      const t = await env.resolve('b.txt')
      const created = await env.fs.writeBytes(t, new TextEncoder().encode('one\r\n'))
      expect(created.operation).toBe('create')
      expect((await env.fs.stat(t))?.version).toBe(created.version)
      const updated = await env.fs.writeBytes(t, new TextEncoder().encode('two\n'))
      expect(updated).toEqual<FsBytesWriteOutcome>({ operation: 'update', version: updated.version })
      expect(updated.version).not.toBe(created.version)
      expect((await env.fs.stat(t))?.version).toBe(updated.version)
      expect(await env.fs.readText(t)).toBe('two\n')
    })

    kit.test('readBytes of a missing file is FS_NOT_FOUND; of a directory FS_NOT_REGULAR_FILE', async (env) => {
      await env.write('d/f.txt', 'x')
      expect(await codeOf(env.fs.readBytes(await env.resolve('missing.bin')))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.readBytes(await env.resolve('d')))).toBe('FS_NOT_REGULAR_FILE')
    })

    kit.test('readBytes above maxBytes is FS_TOO_LARGE; a maxBytes that is not a non-negative integer is FS_UNSUPPORTED', async (env) => {
      const t = await env.resolve('ten.bin')
      await env.fs.writeBytes(t, new Uint8Array(10))
      expect(await codeOf(env.fs.readBytes(t, { maxBytes: 9 }))).toBe('FS_TOO_LARGE')
      expect((await env.fs.readBytes(t, { maxBytes: 10 })).length).toBe(10)
      for (const maxBytes of [-1, 1.5, Number.NaN, '10' as never]) {
        expect(await codeOf(env.fs.readBytes(t, { maxBytes })), `maxBytes ${String(maxBytes)}`).toBe('FS_UNSUPPORTED')
      }
    })

    kit.test("the bytes readBytes returns are the caller's: changing them changes nothing stored", async (env) => {
      const t = await env.resolve('mine.bin')
      await env.fs.writeBytes(t, Uint8Array.from([1, 2, 3]))
      const version = (await env.fs.stat(t))?.version
      ;(await env.fs.readBytes(t)).fill(9)
      expectSameBytes(await env.fs.readBytes(t), Uint8Array.from([1, 2, 3]), 'a second read')
      expect((await env.fs.stat(t))?.version).toBe(version)
    })

    kit.test('readBytes answers an array of its own: its buffer holds the file and nothing else', async (env) => {
      // Small files, where a copy made by Buffer.from or Buffer.concat is a view of Node's shared pool.
      for (const [name, length] of [
        ['tiny.bin', 3],
        ['page.bin', 4000],
        ['empty.bin', 0],
      ] as const) {
        const t = await env.resolve(name)
        await env.fs.writeBytes(
          t,
          Uint8Array.from({ length }, (_, i) => (i * 7 + 1) % 256),
        )
        const bytes = await env.fs.readBytes(t)
        expect([bytes.byteOffset, bytes.buffer.byteLength], `${name}: byteOffset and buffer.byteLength`).toEqual([0, length])
      }
    })

    kit.test('writeBytes copies the bytes: changing the array after the call changes nothing written', async (env) => {
      const t = await env.resolve('copy.bin')
      const bytes = Uint8Array.from([1, 2, 3, 4])
      const pending = env.fs.writeBytes(t, bytes)
      bytes.fill(0)
      await pending
      expectSameBytes(await env.fs.readBytes(t), Uint8Array.from([1, 2, 3, 4]), 'the stored bytes')
    })

    kit.test('writeBytes of content that is not a Uint8Array is FS_UNSUPPORTED and writes nothing', async (env) => {
      const t = await env.resolve('no.bin')
      for (const content of ['text', [1, 2], null, new ArrayBuffer(2)]) {
        expect(await codeOf(env.fs.writeBytes(t, content as never)), JSON.stringify(content)).toBe('FS_UNSUPPORTED')
      }
      expect(await env.fs.stat(t)).toBeUndefined()
    })

    kit.test('writeBytes guards: createIfAbsent on a file is FS_NOT_OBSERVED, another version FS_STALE_VERSION, nothing changes', async (env) => {
      const t = await env.resolve('g.bin')
      const first = await env.fs.writeBytes(t, Uint8Array.from([1]))
      expect(await codeOf(env.fs.writeBytes(t, Uint8Array.from([2]), { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_OBSERVED')
      const other = { kind: 'replaceIfVersion', version: FsVersion('not-a-version') } as const
      expect(await codeOf(env.fs.writeBytes(t, Uint8Array.from([3]), { expected: other }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.writeBytes(t, Uint8Array.from([4]), { expected: { kind: 'ifWhatever' } as never }))).toBe('FS_UNSUPPORTED')
      expectSameBytes(await env.fs.readBytes(t), Uint8Array.from([1]), 'after refused writes')
      const second = await env.fs.writeBytes(t, Uint8Array.from([5]), { expected: { kind: 'replaceIfVersion', version: first.version } })
      expect(second.operation).toBe('update')
      expect(await codeOf(env.fs.writeBytes(await env.resolve('gone.bin'), Uint8Array.from([6]), { expected: other }))).toBe('FS_STALE_VERSION')
    })

    kit.test('writeBytes creates missing parents; over a directory it is FS_NOT_REGULAR_FILE', async (env) => {
      await env.fs.writeBytes(await env.resolve('p/q/r.bin'), Uint8Array.from([7]))
      expect((await env.fs.stat(await env.resolve('p/q')))?.type).toBe('directory')
      expect(await codeOf(env.fs.writeBytes(await env.resolve('p/q'), Uint8Array.from([8])))).toBe('FS_NOT_REGULAR_FILE')
      expect(await env.names('p/q')).toEqual(['r.bin'])
    })

    kit.test('of N concurrent guarded writeBytes from one version, exactly one wins', async (env) => {
      const t = await env.resolve('race.bin')
      const { version } = await env.fs.writeBytes(t, Uint8Array.from([0]))
      const writers = Array.from({ length: kit.tuning.raceWriters }, (_, i) =>
        codeOf(env.fs.writeBytes(t, Uint8Array.from([i + 1]), { expected: { kind: 'replaceIfVersion', version } })),
      )
      const codes = await Promise.all(writers)
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1)
      expect(
        codes.filter((c) => c !== 'ok').every((c) => c === 'FS_STALE_VERSION'),
        codes.join(', '),
      ).toBe(true)
      const winner = codes.indexOf('ok') + 1
      expectSameBytes(await env.fs.readBytes(t), Uint8Array.from([winner]), 'the winner')
    })

    kit.test(
      'writeBytes above maxTextBytes is FS_TOO_LARGE and creates nothing',
      async (env) => {
        const t = await env.resolve('big.bin')
        expect(await codeOf(env.fs.writeBytes(t, new Uint8Array(LIMIT + 1)))).toBe('FS_TOO_LARGE')
        expect(await env.fs.stat(t)).toBeUndefined()
        await env.fs.writeBytes(t, new Uint8Array(LIMIT))
        expect(await codeOf(env.fs.readBytes(t, { maxBytes: LIMIT * 2 })), 'maxBytes is capped at maxTextBytes').toBe('ok')
      },
      undefined,
      { limits: { maxTextBytes: LIMIT } },
    )
  })

  kit.group('modification time', { caps: ['mtime'], writes: true }, () => {
    kit.test(
      'stat reports mtime (ms since the epoch, near now) for files and directories, every kind of change moves it forward, an atomic rename keeps it',
      async (env) => {
        const t = await env.resolve('m/t.txt')
        await env.fs.writeText(t, 'one')
        const first = await env.fs.stat(t)
        const dir = await env.fs.stat(await env.resolve('m'))
        for (const [what, info] of [
          ['file', first],
          ['directory', dir],
        ] as const) {
          expect(typeof info?.mtime, `${what} mtime`).toBe('number')
          expect(Math.abs((info?.mtime ?? 0) - Date.now()), `${what} mtime is the store's clock, near this one`).toBeLessThan(10 * 60_000)
        }
        // One file per kind of change, each changed after the same pause.
        const changes: [string, (path: string) => Promise<unknown>][] = [
          ['writeText', async (path) => env.fs.writeText(await env.resolve(path), 'two')],
          ['writeText of the same content', async (path) => env.fs.writeText(await env.resolve(path), 'one')],
          ['writeBytes', async (path) => env.fs.writeBytes(await env.resolve(path), Uint8Array.of(0xff, 0))],
          ['editText', async (path) => env.fs.editText(await env.resolve(path), { oldString: 'one', newString: 'two', replaceAll: false })],
          [
            'a multi-edit',
            async (path) =>
              env.fs.editText(await env.resolve(path), [
                { oldString: 'o', newString: 'O', replaceAll: false },
                { oldString: 'e', newString: 'E', replaceAll: false },
              ]),
          ],
          ...(kit.unmet({ hooks: ['writeBytes'] }) === undefined
            ? [['a write behind its back', (path: string) => env.writeBytes(path, 'two')] as [string, (path: string) => Promise<unknown>]]
            : []),
        ]
        const before = new Map<string, number | undefined>()
        for (const [n] of changes.entries()) {
          const path = `m/k${n}.txt`
          await env.fs.writeText(await env.resolve(path), 'one')
          before.set(path, (await env.fs.stat(await env.resolve(path)))?.mtime)
        }
        // A rename declared atomic moves the file as it is, its mtime too (a copy would stamp a new one).
        const moved = kit.caps.rename === 'atomic' ? await env.resolve('m/moved.txt') : undefined
        if (moved !== undefined) await env.fs.writeText(moved, 'moved')
        const movedAt = moved === undefined ? undefined : (await env.fs.stat(moved))?.mtime
        // Stores keep whole seconds at worst (SFTP, S3).
        await new Promise((resolve) => setTimeout(resolve, 1_100))
        await yieldToLoop()
        if (moved !== undefined) {
          const to = await env.resolve('m/moved-to.txt')
          await env.fs.rename(moved, to)
          expect((await env.fs.stat(to))?.mtime, 'the mtime after a rename declared atomic: the file moved as it is, no bytes copied').toBe(movedAt)
        }
        for (const [n, [what, change]] of changes.entries()) {
          const path = `m/k${n}.txt`
          await change(path)
          const after = (await env.fs.stat(await env.resolve(path)))?.mtime
          expect(after ?? 0, `mtime after ${what}`).toBeGreaterThan(before.get(path) ?? Number.POSITIVE_INFINITY)
          const listed = (await env.fs.listDir(await env.resolve('m'))).find((e) => e.name === `k${n}.txt`)
          if (listed?.mtime !== undefined) expect(listed.mtime, `the listed mtime after ${what}: the one stat reports`).toBe(after)
        }
      },
    )
  })
}
