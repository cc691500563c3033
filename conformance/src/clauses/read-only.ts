import { expect } from 'vitest'
import { FsVersion } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'
import { snapshot } from './write.js'

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
  })
}
