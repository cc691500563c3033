import { expect } from 'vitest'
import { codeOf, type Kit } from '../kit.js'

const LIMIT = 4096
const context = { limits: { maxTextBytes: LIMIT } }
const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Whole-file text limits (`maxTextBytes`): refused before anything changes; streaming stays unbounded. */
export function limitClauses(kit: Kit): void {
  kit.group('size limits', { writes: true }, () => {
    const test = (name: string, body: Parameters<Kit['test']>[1]): void => kit.test(name, body, undefined, context)

    test('the factory passes the limits to the backend (FileSystem honours maxTextBytes)', async (env) => {
      expect(env.fs.maxTextBytes, 'create(context) must pass context.limits to the backend constructor').toBe(LIMIT)
    })

    test('writeText of content above maxTextBytes is FS_TOO_LARGE and creates nothing', async (env) => {
      expect(await codeOf(env.write('big.txt', 'a'.repeat(LIMIT + 1)))).toBe('FS_TOO_LARGE')
      expect(await env.fs.stat(await env.resolve('big.txt'))).toBeUndefined()
      expect((await env.write('fits.txt', 'a'.repeat(LIMIT))).operation).toBe('create')
    })

    test('editText whose result would exceed maxTextBytes is FS_TOO_LARGE and leaves the file as it was', async (env) => {
      const outcome = await env.write('grow.txt', `${'a'.repeat(LIMIT - 10)}END`)
      const edit = { oldString: 'END', newString: 'x'.repeat(20), replaceAll: false }
      expect(await codeOf(env.fs.editText(await env.resolve('grow.txt'), edit))).toBe('FS_TOO_LARGE')
      expect(await env.read('grow.txt')).toBe(`${'a'.repeat(LIMIT - 10)}END`)
      expect((await env.fs.stat(await env.resolve('grow.txt')))?.version).toBe(outcome.version)
    })
  })

  kit.group('size limits: a stored file above the limit', { hooks: ['writeBytes', 'readBytes'] }, () => {
    const test = (name: string, body: Parameters<Kit['test']>[1]): void => kit.test(name, body, undefined, context)
    const writingTest = (name: string, body: Parameters<Kit['test']>[1]): void =>
      kit.unmet({ writes: true }) === undefined ? test(name, body) : kit.testIf(name, { writes: true }, body)
    const big = `${'a'.repeat(LIMIT)}Z\n`

    test('readText of a file above maxTextBytes is FS_TOO_LARGE', async (env) => {
      await env.writeBytes('big.txt', big)
      expect(await codeOf(env.read('big.txt'))).toBe('FS_TOO_LARGE')
    })

    writingTest('editText of a file above maxTextBytes is FS_TOO_LARGE and changes no byte', async (env) => {
      await env.writeBytes('big.txt', big)
      const before = await env.fs.stat(await env.resolve('big.txt'))
      const guarded = { expected: { version: before?.version ?? ('' as never) } }
      for (const opts of [{}, guarded]) {
        expect(await codeOf(env.fs.editText(await env.resolve('big.txt'), { oldString: 'Z', newString: 'Y', replaceAll: false }, opts))).toBe('FS_TOO_LARGE')
      }
      expect(Buffer.from(await env.readBytes('big.txt')).equals(Buffer.from(bytesOf(big))), 'the stored bytes changed').toBe(true)
      expect((await env.fs.stat(await env.resolve('big.txt')))?.version).toBe(before?.version)
    })

    test('streamText has no size limit: a file above maxTextBytes streams whole', async (env) => {
      await env.writeBytes('big.txt', big)
      expect((await env.stream('big.txt')).join('')).toBe(big)
    })

    writingTest('writeText over a file above maxTextBytes still replaces it', async (env) => {
      await env.writeBytes('big.txt', big)
      const outcome = await env.write('big.txt', 'small')
      expect(outcome.operation).toBe('update')
      expect(await env.read('big.txt')).toBe('small')
    })
  })
}
