import { beforeChange } from './abort-wait.js'
import { FsError } from './errors.js'
import type { Awaitable } from './hooks.js'
import type { FsTarget } from './types.js'

/** How {@link RootRule.refuse} finds the root: the `rootTarget` hook, and the call's translation of its failures. */
export interface RootLookup {
  readonly signal: AbortSignal | undefined
  readonly lookup: () => Awaitable<FsTarget>
  readonly translate: (err: unknown) => FsError
}

/**
 * The root rule, decided once for every backend: the store's root (what `rootTarget` names) is never
 * removed or moved, nor anything moved onto it (`FsError.storeRoot`). The root's key is asked once
 * and kept; a store whose root cannot be named (outside a fence) has none to protect.
 */
export class RootRule {
  /** The root's `targetKey` once known; `null` when the store has none to protect. */
  #key: string | null | undefined = undefined

  async refuse(targets: readonly FsTarget[], verb: 'remove' | 'rename', { signal, lookup, translate }: RootLookup): Promise<void> {
    let key = this.#key
    if (key === undefined) {
      try {
        key = (await beforeChange(lookup(), signal, verb, targets[0]?.displayPath ?? '/')).targetKey
      } catch (err) {
        const error = translate(err)
        if (error.code !== 'FS_SANDBOX_DENIED' && error.code !== 'FS_NOT_FOUND') throw error
        key = null
      }
      this.#key = key
    }
    for (const target of targets) if (target.targetKey === key) throw FsError.storeRoot(verb, target.displayPath)
  }
}
