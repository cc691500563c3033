import { posix } from 'node:path'
import { performance } from 'node:perf_hooks'
import { FsError, type FsTarget, type FsVerb, type FsVersion } from '@seamfs/core/backend'
import { readChecked, type Opening, type ReadSite, dropOpening } from './checked-reads.js'
import { STATUS, statusOf } from './errors.js'
import type { FileHints } from './hints.js'
import { isReservedName } from './names.js'
import { containsPath, kindOf, outsideRoot } from './paths.js'
import type { Attrs, Session } from './session.js'
import { contentVersion, metadataVersion, type VersionCache } from './versions.js'

/** A failure that says the path is absent becomes `undefined`; any other is thrown. */
export const absent = (err: unknown): undefined => {
  if (statusOf(err) === STATUS.NO_SUCH_FILE) return undefined
  throw err
}

/** What `#readCurrent` reads for: the verb and path of its errors, the signal, and an optional size limit. */
export interface ReadFor {
  readonly verb: FsVerb
  readonly path: string
  readonly signal: AbortSignal | undefined
  readonly maxBytes?: number
  /** An OPEN of the file already sent (see `sendOpen`). */
  readonly opening?: Opening | undefined
}

/**
 * What every hook of `SftpFileSystem` checks of its targets on the server before it acts on
 * them: the key inside the root, the reserved names, the fence (the server's realpath) sent with
 * the first request, the kind of file; and the content versions of files read, kept in the cache.
 */
export class Targets {
  readonly #root: () => string
  readonly #hints: FileHints
  readonly #versions: VersionCache

  /** `root`: the canonical root, once the session located it. */
  constructor(root: () => string, hints: FileHints, versions: VersionCache) {
    this.#root = root
    this.#hints = hints
    this.#versions = versions
  }

  /** Listings hide (and sweeps remove) temp names and lock entries: a file or directory made under one would be lost from view. */
  refuseReserved(key: string, verb: FsVerb, path: string): void {
    const reserved = key.slice(this.#root().length).split('/').find(isReservedName)
    if (reserved !== undefined) throw FsError.unsupported(verb, path, `the name "${reserved}" is reserved for seamfs's temp files and lock entries`)
  }

  /** Who reads what, for the checks of checked-reads.ts. */
  site(key: string, verb: FsVerb, path: string): ReadSite {
    return { root: this.#root(), key, verb, path }
  }

  /** The target's key, refused when it lies outside the root (a forged or foreign target). */
  key(target: FsTarget, verb: FsVerb): string {
    const key: string = target.targetKey
    if (!key.startsWith('/') || posix.normalize(key) !== key || !containsPath(this.#root(), key)) {
      throw outsideRoot(verb, target.displayPath, this.#root())
    }
    return key
  }

  /**
   * The server's realpath of `key`, checked against the root. Sent with the
   * operation's first request (same round trip): a symlink swapped into the
   * path since `resolve` cannot lead an operation out of the root.
   */
  async fence(s: Session, key: string, verb: FsVerb, target: { readonly displayPath: string }): Promise<void> {
    const real = await s.realpath(key).catch(absent)
    if (real !== undefined && !containsPath(this.#root(), real)) throw outsideRoot(verb, target.displayPath, this.#root())
  }

  /**
   * Before a write makes its stage (with its own fence, in one round trip): the fence alone, first,
   * unless `key` was found inside the root moments ago. A directory swapped for an outward link
   * since then would have the stage made outside before the fence's answer came back.
   */
  async fenceFirst(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<void> {
    if (this.#hints.inside(key)) return
    await this.fence(s, key, verb, target)
    this.#hints.sawInside(key)
  }

  /** The attrs of `key` (symlinks followed), undefined when absent; fenced in the same round trip. */
  async current(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<Attrs | undefined> {
    const [, attrs] = await Promise.all([this.fence(s, key, verb, target), s.stat(key).catch(absent)])
    return attrs
  }

  async regularFile(s: Session, key: string, verb: FsVerb, target: FsTarget): Promise<Attrs> {
    const attrs = await this.current(s, key, verb, target)
    if (attrs === undefined) throw FsError.notFound(verb, target.displayPath)
    this.assertFile(attrs, verb, target)
    return attrs
  }

  assertFile(attrs: Attrs, verb: FsVerb, target: FsTarget): void {
    if (kindOf(attrs.mode) !== 'file') throw FsError.notRegularFile(verb, target.displayPath)
  }

  /** A file's content-hash version: from the settled cache, else by reading it (undefined when it vanished). */
  async fileVersion(s: Session, key: string, attrs: Attrs, op: ReadFor): Promise<FsVersion | undefined> {
    const cached = this.#versions.lookup(key, attrs)
    if (cached !== undefined) {
      dropOpening(s, op.opening)
      return cached
    }
    try {
      return (await this.readCurrent(s, key, attrs, op))?.version
    } catch (err) {
      // A file this user may not read still has metadata: its version falls back to it.
      if (statusOf(err) === STATUS.PERMISSION_DENIED) return metadataVersion('unreadable', attrs)
      throw err
    }
  }

  /**
   * Reads a file whole with the attrs of the same handle, hashes it, and offers the hash to
   * the cache; undefined when it vanished. With `maxBytes`, a file that grew beyond it since
   * its stat is `FS_TOO_LARGE`, and no more than `maxBytes + 1` bytes are held.
   */
  async readCurrent(s: Session, key: string, attrs: Attrs, op: ReadFor): Promise<{ bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined> {
    const { verb, path, signal, maxBytes = Number.POSITIVE_INFINITY, opening } = op
    const startedAt = performance.now()
    const read = await readChecked(s, this.site(key, verb, path), { sizeHint: attrs.size, limit: maxBytes + 1, signal, first: opening }).catch(absent)
    if (read === undefined) return undefined
    const { bytes, attrs: opened } = read
    if (bytes.length > maxBytes) throw FsError.tooLarge(verb, path, Math.max(bytes.length, opened.size), maxBytes)
    const version = contentVersion(bytes)
    this.#versions.offer(key, opened, version, startedAt)
    return { bytes, version, attrs: opened }
  }

  /** Whether a hash of the content of a file of this mtime, read from now on, would be settled (see {@link VersionCache.settles}). */
  settles(mtime: number): boolean {
    return this.#versions.settles(mtime)
  }

  /** The settled hash of the file at `key` while it has these attrs, if the cache has one. */
  settled(key: string, attrs: Attrs): FsVersion | undefined {
    return this.#versions.lookup(key, attrs)
  }

  /** Bookkeeping after a publication; returns the new version. */
  published(key: string, attrs: Attrs, bytes: Uint8Array): FsVersion {
    this.#versions.observe(attrs.mtime)
    this.#versions.forget(key)
    this.#hints.saw(key, attrs)
    this.#hints.sawInside(key)
    return contentVersion(bytes)
  }
}
