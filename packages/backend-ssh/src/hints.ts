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
 */
export class FileHints {
  readonly #seen = new Map<string, { readonly at: number; readonly size: number }>()

  /** Records what a request saw at `key` (undefined: nothing there). */
  saw(key: string, attrs: Attrs | undefined): void {
    if (attrs === undefined || kindOf(attrs.mode) !== 'file') {
      this.#seen.delete(key)
      return
    }
    if (this.#seen.size >= MAX_ENTRIES) this.#seen.clear()
    this.#seen.set(key, { at: performance.now(), size: attrs.size })
  }

  /** The size of the regular file seen at `key` within the last `HINT_MS`, else undefined. */
  fileSize(key: string): number | undefined {
    const hint = this.#seen.get(key)
    if (hint === undefined) return undefined
    if (performance.now() - hint.at <= HINT_MS) return hint.size
    this.#seen.delete(key)
    return undefined
  }
}
