import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FileSystem, FINAL_METHODS, overriddenMethods, overrideMessage } from '@seamfs/core'
import type { Kit } from '../kit.js'
import { holds } from './seeded.js'

/** The clause's title (its row in the report). */
export const FINAL_CLAUSE = 'public methods are final'

/** What a refusal of core's constructor says (`final-methods.ts` in core). */
const REFUSED_AT_CONSTRUCTION = /, a public method of FileSystem: public methods are final/

/**
 * The prototype of `FileSystem` as `fs` inherits it: this kit's core's own, or, where the subject
 * was built on another copy of `@seamfs/core`, the topmost class on its chain named `FileSystem`
 * that defines the contract's methods. Undefined when there is none: the subject does not extend
 * `FileSystem` at all.
 */
function contractBase(fs: object): object | undefined {
  if (fs instanceof FileSystem) return FileSystem.prototype
  let base: object | undefined
  for (let p = Object.getPrototypeOf(fs) as object | null; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    if (Object.hasOwn(p, 'readText') && Object.hasOwn(p, 'resolve')) base = p
  }
  const name = (base as { constructor?: { name?: unknown } } | undefined)?.constructor?.name
  return name === 'FileSystem' ? base : undefined
}

/**
 * Why `fs` is not the contract as core implements it, or undefined when it is: core checks
 * arguments, limits, UTF-8 and outcome shapes in the public methods, once for every backend, and a
 * subject that answers one of them with its own code (a subclass that slipped past core's
 * constructor check, a property set on the instance, a proxy in front) bypasses all of that.
 */
export function contractRefusal(fs: unknown): string | undefined {
  if (typeof fs !== 'object' || fs === null) return `the subject's fs is ${fs === null ? 'null' : typeof fs}, not a FileSystem`
  const base = contractBase(fs)
  if (base === undefined)
    return "the subject's fs does not extend FileSystem of @seamfs/core: the contract's methods are core's, a backend implements its protected hooks"
  const found = overriddenMethods(fs, base)
  if (found.length === 0) return undefined
  return found.map(({ name, where }) => overrideMessage(name, where)).join('; ')
}

/** Whether `err` is core's refusal of a class that overrides a public method, at construction. */
export function isOverrideRefusal(err: unknown): err is TypeError {
  return err instanceof TypeError && REFUSED_AT_CONSTRUCTION.test(err.message)
}

/**
 * A subject refused before any test could run (core's constructor refused its class, or the probe
 * showed a public method answered by other code): the clause's one test fails with why, and no
 * other clause is registered, since every one of them calls the public methods.
 */
export function refusedClauses(suite: string, why: string): void {
  describe(suite, () => {
    describe(FINAL_CLAUSE, () => {
      it('no public method of FileSystem is overridden (they are core’s: a backend implements the protected hooks)', () => {
        throw new Error(why)
      })
    })
  })
}

/** For a subject the probe found intact: each fresh subject is checked again (a factory may build different ones). */
export function finalMethodClauses(kit: Kit): void {
  kit.group(FINAL_CLAUSE, {}, () => {
    kit.test('no public method of FileSystem is overridden (they are core’s: a backend implements the protected hooks)', async (env) => {
      expect(contractRefusal(env.fs)).toBeUndefined()
    })

    const anyTitle =
      'any public method answered by other code (a method or an accessor of a subclass at any depth, a property on the instance, a proxy) is refused, naming it'
    kit.test(anyTitle, async (env) => {
      const how = fc.record({
        name: fc.constantFrom(...Object.keys(FINAL_METHODS)),
        form: fc.constantFrom('method', 'accessor', 'instance', 'proxy'),
        depth: fc.integer({ min: 1, max: 3 }),
      })
      await holds(kit, anyTitle, how, async ({ name, form, depth }) => {
        const other = (): never => {
          throw new Error('not the contract')
        }
        const what = `${name} as ${form === 'method' || form === 'accessor' ? `${form} of a subclass ${depth} deep` : form}`
        if (form === 'method' || form === 'accessor') {
          // A class of core's own FileSystem, `depth` subclasses down: its constructor refuses it.
          let cls: new () => object = class Overriding extends (FileSystem as unknown as new () => object) {}
          const top = cls
          for (let i = 1; i < depth; i++) cls = class Deeper extends cls {}
          Object.defineProperty(top.prototype, name, form === 'method' ? { value: other, configurable: true } : { get: () => other, configurable: true })
          expect(() => new cls(), what).toThrow(new RegExp(`overrides ${name}, a public method of FileSystem`))
          return
        }
        // The subject itself, answered by other code: the kit refuses it.
        const fs = env.fs
        const subject: object =
          form === 'instance'
            ? Object.defineProperty(Object.create(fs) as object, name, { value: other })
            : new Proxy(fs, { get: (t, p, r) => (p === name ? other : (Reflect.get(t, p, r) as unknown)) })
        expect(contractRefusal(subject), what).toMatch(new RegExp(`overrides ${name}, a public method of FileSystem`))
      })
    })
  })
}
