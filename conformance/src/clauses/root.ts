import { expect } from 'vitest'
import { isFsError, type FsTarget } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'
import { snapshot } from './write.js'

/**
 * The store's root as a caller can name it: `resolve('/')`, or, where `/` lies outside a `root`
 * scope (`FS_SANDBOX_DENIED`), the last directory going up from the cwd before the fence.
 */
export async function storeRoot(env: Env): Promise<FsTarget> {
  try {
    return await env.fs.resolve('/')
  } catch (err) {
    if (!isFsError(err, 'FS_SANDBOX_DENIED')) throw err
  }
  let here = await env.resolve('.')
  for (let depth = 0; depth < 256; depth++) {
    let up: FsTarget
    try {
      up = await env.fs.resolve(`${here.displayPath.replace(/\/+$/, '')}/..`)
    } catch (err) {
      if (isFsError(err, 'FS_SANDBOX_DENIED')) return here
      throw err
    }
    if (up.targetKey === here.targetKey) return here
    here = up
  }
  return here
}

/**
 * The root rule, decided by core once for every backend: the store's root is never removed or
 * moved, nor anything moved onto it, with `FS_PERMISSION_DENIED`. The kit never asks for a
 * recursive remove of the root: on a local disk a backend that broke the rule would take the machine
 * with it.
 */
export function rootClauses(kit: Kit): void {
  kit.group("the store's root", {}, () => {
    kit.testIf("remove of the store's root is FS_PERMISSION_DENIED, guarded or not, and nothing changes", { caps: ['remove'] }, async (env) => {
      await env.write('keep.txt', 'kept')
      const root = await storeRoot(env)
      const before = await snapshot(env)
      expect(await codeOf(env.fs.remove(root)), 'unguarded').toBe('FS_PERMISSION_DENIED')
      const version = (await env.fs.stat(root))?.version
      if (version !== undefined) expect(await codeOf(env.fs.remove(root, { expected: { version } })), 'guarded').toBe('FS_PERMISSION_DENIED')
      expect(await snapshot(env)).toEqual(before)
    })

    kit.testIf("the store's root is never moved, nor anything moved onto it: FS_PERMISSION_DENIED, and nothing changes", { caps: ['rename'] }, async (env) => {
      await env.write('keep.txt', 'kept')
      const root = await storeRoot(env)
      const file = await env.resolve('keep.txt')
      const before = await snapshot(env)
      expect(await codeOf(env.fs.rename(root, await env.resolve('moved-root'))), 'the root moved').toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(env.fs.rename(file, root, { overwrite: true })), 'a file moved onto the root').toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(env.fs.rename(root, root)), 'the root onto itself').toBe('FS_PERMISSION_DENIED')
      expect(await snapshot(env)).toEqual(before)
      expect(await env.read('keep.txt')).toBe('kept')
    })
  })
}
