import { performance } from 'node:perf_hooks'
import type { Attrs } from './connection.js'
import { kindOf } from './paths.js'

/** How long a sighting of a regular file is trusted for sending an OPEN before its type is known again (ms). */
export const HINT_MS = 1_000
/** Entries kept before the hints start over (they are only an optimisation). */
const MAX_ENTRIES = 10_000

/**
 * Paths this client saw as regular files moments ago (a `resolve`, `stat`,
 * listing or write), with the size seen. An operation on such a path sends
 * its OPEN with its first `stat` instead of a round trip after it. Elsewhere
 * the OPEN waits for the `stat`: OpenSSH's sftp-server is one process that
 * answers in order, and an OPEN of a FIFO blocks it until a writer comes, so
 * the session would hang. A regular file replaced by a FIFO within `HINT_MS`
 * of its sighting can still do that (as a swap between a `stat` and an OPEN
 * always could).
 *
 * Also the paths found inside the root moments ago (a `resolve`'s realpath, a
 * checked publication): a write there makes its stage with its fence, in one
 * round trip. Elsewhere the stage waits for the fence: a directory swapped for
 * an outward link since (a target kept from long ago) would otherwise have the
 * stage made outside the root before the fence's answer is in.
 */
export class FileHints {
  readonly #seen = new Map<string, { readonly at: number; readonly size: number; readonly mtime: number }>()
  readonly #inside = new Map<string, number>()

  /** Records what a request saw at `key` (undefined: nothing there). */
  saw(key: string, attrs: Attrs | undefined): void {
    if (attrs === undefined || kindOf(attrs.mode) !== 'file') {
      this.#seen.delete(key)
      return
    }
    if (this.#seen.size >= MAX_ENTRIES) this.#seen.clear()
    this.#seen.set(key, { at: performance.now(), size: attrs.size, mtime: attrs.mtime })
  }

  /** The size of the regular file seen at `key` within the last `HINT_MS`, else undefined. */
  fileSize(key: string): number | undefined {
    return this.file(key)?.size
  }

  /** The size and mtime of the regular file seen at `key` within the last `HINT_MS`, else undefined. */
  file(key: string): { readonly size: number; readonly mtime: number } | undefined {
    const hint = this.#seen.get(key)
    if (hint === undefined) return undefined
    if (performance.now() - hint.at <= HINT_MS) return hint
    this.#seen.delete(key)
    return undefined
  }

  /** Records that the server's realpath of `key` was `key` itself, inside the root, just now. */
  sawInside(key: string): void {
    if (this.#inside.size >= MAX_ENTRIES) this.#inside.clear()
    this.#inside.set(key, performance.now())
  }

  /** True when `key` was found inside the root within the last `HINT_MS`. */
  inside(key: string): boolean {
    const at = this.#inside.get(key)
    if (at === undefined) return false
    if (performance.now() - at <= HINT_MS) return true
    this.#inside.delete(key)
    return false
  }
}
