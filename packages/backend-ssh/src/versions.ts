import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { FsVersion } from '@seamfs/core/backend'
import type { Attrs } from './connection.js'

/**
 * Seconds a file's mtime must lie behind the server's clock before its hash
 * is trusted without reading the file again: one for SFTP's whole-second
 * mtimes, one of margin for clock drift between here and the server.
 */
const SETTLE_SECONDS = 2
/** Entries kept before the cache starts over (it is only an optimisation). */
const MAX_ENTRIES = 10_000

/** The version of a file: a content hash, so any change of content, by anyone, changes it. */
export function contentVersion(bytes: Uint8Array): FsVersion {
  return FsVersion(`sha256:${createHash('sha256').update(bytes).digest('base64url')}`)
}

/** The version of a directory, symlink or special file (no content to hash). */
export function metadataVersion(kind: string, attrs: Attrs): FsVersion {
  return FsVersion(`${kind}:${attrs.size}:${attrs.mtime}:${attrs.mode}`)
}

interface Entry {
  readonly size: number
  readonly mtime: number
  readonly version: FsVersion
}

/**
 * Content-hash versions without reading every file on every `stat`.
 *
 * SFTP v3 reports whole-second mtimes and no inode or ctime, so size + mtime
 * cannot see two writes in one second with one size. The version is therefore
 * a SHA-256 of the content. Reading a file to hash it is the cost; this cache
 * skips the read when it is safe: a hash taken from a read that started at
 * server time ≥ mtime + 2 s stays right for as long as size and mtime stay
 * put, because any later write sets the mtime to a later second. (A writer
 * that also restores the mtime and keeps the size defeats it: turn the cache
 * off with `hashCache: false` for that.)
 *
 * The server's clock is never read directly: each file this client writes
 * reports, through fstat, an mtime that is the server's time of that write,
 * which bounds the server clock from below from then on (`observe`). Until a
 * first write, nothing is trusted and every `stat` of a file hashes it.
 */
export class VersionCache {
  readonly #entries = new Map<string, Entry>()
  readonly #enabled: boolean
  /** Lower bound of the server clock, in seconds, as of local monotonic time `#boundAt` (ms). */
  #bound = Number.NEGATIVE_INFINITY
  #boundAt = 0

  constructor(enabled: boolean) {
    this.#enabled = enabled
  }

  /** Records that the server's clock read at least `mtime` (an mtime this client just caused) by now. */
  observe(mtime: number): void {
    const now = performance.now()
    if (mtime > this.#serverLowerBound(now)) {
      this.#bound = mtime
      this.#boundAt = now
    }
  }

  /** True when a hash of `key` is cached (it may still turn out stale against the current attrs). */
  has(key: string): boolean {
    return this.#entries.has(key)
  }

  /** The cached version of `key` when its size and mtime are those of a settled hash. */
  lookup(key: string, attrs: Attrs): FsVersion | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.size === attrs.size && entry.mtime === attrs.mtime) return entry.version
    this.#entries.delete(key)
    return undefined
  }

  /**
   * Offers the hash of `key`'s content read from `readStartedAt` (local
   * monotonic ms) with `attrs` taken on the same handle. Kept only when the
   * read began after the mtime's second was safely over on the server.
   */
  offer(key: string, attrs: Attrs, version: FsVersion, readStartedAt: number): void {
    if (!this.#enabled) return
    if (this.#serverLowerBound(readStartedAt) < attrs.mtime + SETTLE_SECONDS) {
      this.#entries.delete(key)
      return
    }
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear()
    this.#entries.set(key, { size: attrs.size, mtime: attrs.mtime, version })
  }

  /** Whether a hash of a file of this mtime, from a read that starts now, would be kept (settled): the mtime lies far enough behind the server's clock. */
  settles(mtime: number): boolean {
    return this.#enabled && this.#serverLowerBound(performance.now()) >= mtime + SETTLE_SECONDS
  }

  /** Carries `from`'s entry over to `to` (a rename keeps size and mtime), forgetting both first. */
  move(from: string, to: string): void {
    const entry = this.#entries.get(from)
    this.#entries.delete(from)
    this.#entries.delete(to)
    if (entry !== undefined) this.#entries.set(to, entry)
  }

  /** Forgets `dir` and every path below it (a directory this client removed or moved). */
  forgetBelow(dir: string): void {
    const prefix = dir === '/' ? '/' : `${dir}/`
    for (const key of this.#entries.keys()) if (key === dir || key.startsWith(prefix)) this.#entries.delete(key)
  }

  /** Forgets `key` (it was just replaced or removed by this client). */
  forget(key: string): void {
    this.#entries.delete(key)
  }

  #serverLowerBound(localMs: number): number {
    return this.#bound + (localMs - this.#boundAt) / 1000
  }
}
