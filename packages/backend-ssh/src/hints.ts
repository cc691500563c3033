import { performance } from 'node:perf_hooks'
import type { Attrs } from './connection.js'
import { kindOf } from './paths.js'

/** How long a sighting (a regular file's size and mtime, a path inside the root) is trusted by a write (ms). */
export const HINT_MS = 1_000
/**
 * How long a sighting of a regular file is trusted for sending a read's OPEN before its type is known
 * again (ms): long enough for a search's reads of what its listing found (a grep of a few hundred
 * files at 50 ms a round trip takes seconds). The window does not make the FIFO swap below easier for
 * a process that loops swaps (any window is hit), and the request deadline bounds what it costs.
 */
export const OPEN_HINT_MS = 10_000
/** Entries kept before the hints start over (they are only an optimisation). */
const MAX_ENTRIES = 10_000

/**
 * Paths this client saw as regular files moments ago (a `resolve`, `stat`,
 * listing or write), with the size seen. An operation on such a path sends
 * its OPEN with its first `stat` instead of a round trip after it (a read within
 * `OPEN_HINT_MS` of the sighting; what a write trusts, within `HINT_MS`). Elsewhere
 * the OPEN waits for the `stat`: OpenSSH's sftp-server is one process that
 * answers in order, and an OPEN of a FIFO blocks it until a writer comes, so
 * the session would hang. A regular file replaced by a FIFO within `OPEN_HINT_MS`
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

  /** True when a regular file was seen at `key` within the last {@link OPEN_HINT_MS}: a read may send its OPEN at once. */
  openable(key: string): boolean {
    const hint = this.#seen.get(key)
    if (hint === undefined) return false
    if (performance.now() - hint.at <= OPEN_HINT_MS) return true
    this.#seen.delete(key)
    return false
  }

  /** The size and mtime of the regular file seen at `key` within the last `HINT_MS`, else undefined. */
  file(key: string): { readonly size: number; readonly mtime: number } | undefined {
    const hint = this.#seen.get(key)
    if (hint === undefined || performance.now() - hint.at > HINT_MS) return undefined
    return hint
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
