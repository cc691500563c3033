import fc from 'fast-check'
import { expect } from 'vitest'
import { FsVersion } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'
import { holds } from './seeded.js'
import { snapshot } from './write.js'

/** Where a drawn mutation aims: a file, a directory, a file in it, a missing file, a path below a missing directory. */
const PLACES = ['f.txt', 'd', 'd/inner.txt', 'missing.txt', 'd/new/deeper.txt']

/** Every mutation, with the options that change what it does (guards, recursion, overwrite). */
const DRAWN: ReadonlyArray<readonly [string, (env: Env, path: string, other: string) => Promise<unknown>]> = [
  ['writeText', async (env, p) => env.fs.writeText(await env.resolve(p), 'changed')],
  ['writeText createIfAbsent', async (env, p) => env.fs.writeText(await env.resolve(p), 'x', { expected: { kind: 'createIfAbsent' } })],
  [
    'writeText replaceIfVersion',
    async (env, p) => env.fs.writeText(await env.resolve(p), 'x', { expected: { kind: 'replaceIfVersion', version: FsVersion('v') } }),
  ],
  ['writeBytes', async (env, p) => env.fs.writeBytes(await env.resolve(p), Uint8Array.of(0x78))],
  ['editText', async (env, p) => env.fs.editText(await env.resolve(p), edit)],
  ['editText of a list', async (env, p) => env.fs.editText(await env.resolve(p), [edit, { oldString: 'two', newString: 'three', replaceAll: true }])],
  ['remove', async (env, p) => env.fs.remove(await env.resolve(p))],
  ['remove recursive', async (env, p) => env.fs.remove(await env.resolve(p), { recursive: true })],
  ['remove guarded', async (env, p) => env.fs.remove(await env.resolve(p), { expected: { version: FsVersion('v') } })],
  ['rename', async (env, p, q) => env.fs.rename(await env.resolve(p), await env.resolve(q))],
  ['rename overwrite', async (env, p, q) => env.fs.rename(await env.resolve(p), await env.resolve(q), { overwrite: true })],
  ['createDirectory', async (env, p) => env.fs.createDirectory(await env.resolve(p))],
]

const edit = { oldString: 'one', newString: 'two', replaceAll: false }

/** Every mutation of the contract, on a file the store holds. */
const MUTATIONS: ReadonlyArray<readonly [string, (env: Env) => Promise<unknown>]> = [
  ['writeText of an existing file', async (env) => env.fs.writeText(await env.resolve('f.txt'), 'changed')],
  ['writeText of a new file', async (env) => env.fs.writeText(await env.resolve('d/new.txt'), 'new')],
  ['writeText guarded', async (env) => env.fs.writeText(await env.resolve('f.txt'), 'x', { expected: { kind: 'createIfAbsent' } })],
  ['writeBytes', async (env) => env.fs.writeBytes(await env.resolve('f.txt'), Uint8Array.of(0x78))],
  ['editText', async (env) => env.fs.editText(await env.resolve('f.txt'), edit)],
  ['editText guarded', async (env) => env.fs.editText(await env.resolve('f.txt'), edit, { expected: { version: FsVersion('v') } })],
  ['remove of a file', async (env) => env.fs.remove(await env.resolve('f.txt'))],
  ['remove of a directory, recursive', async (env) => env.fs.remove(await env.resolve('d'), { recursive: true })],
  ['rename', async (env) => env.fs.rename(await env.resolve('f.txt'), await env.resolve('g.txt'))],
  ['rename onto itself', async (env) => env.fs.rename(await env.resolve('f.txt'), await env.resolve('f.txt'))],
  ['createDirectory', async (env) => env.fs.createDirectory(await env.resolve('e'))],
]

/**
 * A store that does not write (`capabilities.readOnly`): core refuses every mutation with
 * `FS_PERMISSION_DENIED` before any I/O, whatever the backend's hooks would do, and nothing changes.
 */
export function readOnlyClauses(kit: Kit): void {
  kit.group('read-only store', { caps: ['readOnly'] }, () => {
    for (const [name, run] of MUTATIONS) {
      kit.test(`${name} is FS_PERMISSION_DENIED, and nothing changes`, async (env) => {
        await env.write('f.txt', 'one')
        await env.write('d/inner.txt', 'inner')
        const before = await snapshot(env)
        expect(await codeOf(run(env))).toBe('FS_PERMISSION_DENIED')
        expect(await snapshot(env)).toEqual(before)
        expect(await env.read('f.txt')).toBe('one')
      })
    }

    const drawnTitle = 'any mutation, with any of its options, on any target (a file, a directory, a missing path) is FS_PERMISSION_DENIED, and nothing changes'
    kit.test(drawnTitle, async (env) => {
      await env.write('f.txt', 'one')
      await env.write('d/inner.txt', 'inner')
      const before = await snapshot(env)
      const drawn = fc
        .tuple(fc.constantFrom(...DRAWN), fc.constantFrom(...PLACES), fc.constantFrom(...PLACES))
        .map(([[name, run], path, other]) =>
          Object.assign({ name, run, path, other }, { [fc.toStringMethod]: () => `${name} of ${path}${name.startsWith('rename') ? ` to ${other}` : ''}` }),
        )
      await holds(kit, drawnTitle, drawn, async ({ name, run, path, other }) => {
        expect(await codeOf(run(env, path, other)), `${name} of ${path}`).toBe('FS_PERMISSION_DENIED')
        expect(await snapshot(env), `the store after ${name} of ${path}`).toEqual(before)
      })
    })
  })
}
