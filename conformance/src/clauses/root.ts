import { expect } from 'vitest'
import { isFsError, type FsTarget } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'
import fc from 'fast-check'
import { holds } from './seeded.js'
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

    const aliasesTitle =
      "any spelling of the store's root (dot segments, doubled and trailing separators, down to the cwd and back up) is never removed or moved"
    kit.testIf(aliasesTitle, { caps: ['remove', 'rename'] }, async (env) => {
      await env.write('keep.txt', 'kept')
      const root = await storeRoot(env)
      const cwd = await env.resolve('.')
      const base = root.displayPath.replace(/\/+$/, '')
      // The names from the root down to the cwd: a path down them and back up names the root.
      const down = cwd.displayPath
        .slice(base.length)
        .split('/')
        .filter((n) => n !== '')
      const before = await snapshot(env)
      const spelling = fc
        .record({
          steps: fc.array(fc.constantFrom('.', '', 'down-up'), { maxLength: 4 }),
          trailing: fc.constantFrom('', '/', '//', '/.', '/./'),
        })
        .map(({ steps, trailing }) => {
          const parts = steps.flatMap((step) => (step === 'down-up' ? [...down, ...down.map(() => '..')] : [step]))
          return `${base}/${parts.join('/')}${trailing}`
        })
      await holds(kit, aliasesTitle, spelling, async (path) => {
        const alias = await env.fs.resolve(path)
        expect(alias.targetKey, `${JSON.stringify(path)} names the root`).toBe(root.targetKey)
        expect(await codeOf(env.fs.remove(alias)), `remove(${JSON.stringify(path)})`).toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(env.fs.rename(alias, await env.resolve('moved-root'))), `rename(${JSON.stringify(path)} → moved-root)`).toBe('FS_PERMISSION_DENIED')
      })
      expect(await snapshot(env)).toEqual(before)
    })
  })
}
