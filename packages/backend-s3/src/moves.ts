/** `remove`, `rename` and `createDirectory` over S3: deletes, server-side copies and `dir/` markers. */
import {
  checkGuard,
  FsError,
  FsVersion,
  throwIfAborted,
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type FsVerb,
  type LeaseHold,
  type RemoveRequest,
  type RenameRequest,
} from '@seamfs/core/backend'
import { deleteKey, deletesAreGuarded, isDirectory, type MoveContext } from './move-context.js'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import { Renames } from './renames.js'
import { keyFits, MAX_KEY_BYTES, versionOf, type PutConflict, type Revision } from './revisions.js'
import { lookAfter } from './writes.js'

export type { MoveContext } from './move-context.js'
export { MAX_COPY_BYTES } from './renames.js'

/** The version of every directory (`stat` reports it): directories are key prefixes, nothing about them changes but their listing. */
export const DIRECTORY_VERSION = FsVersion('directory')
/** The Content-Type of a directory marker (what S3 consoles and s3fs use). */
export const MARKER_CONTENT_TYPE = 'application/x-directory'

/** How a directory is removed (see `Moves.remove`). */
interface DirectoryRemove {
  readonly recursive: boolean
  readonly signal: AbortSignal | undefined
  readonly maxEntries: number
  readonly guarded: boolean
}

/**
 * Whether the server enforces every condition removes and renames send (DELETE `If-Match`, the
 * copy's source and destination conditions): then they need no lock, and no write need hold one
 * to stay out of their way (radosgw 16: false).
 */
export const serverArbitratesMoves = (probe: S3ProbeResult, moves: S3MoveProbeResult): boolean =>
  deletesAreGuarded(probe, moves) && moves.copyIfNoneMatch && moves.copyIfMatch && moves.copySourceIfMatch !== null

/**
 * The three optional operations. Guards the server enforces are sent as request conditions;
 * the others are checked while holding the key's lock: its lock object where lock objects are
 * used (every seamfs write, edit, remove and rename of the key, in any process, holds it too:
 * `'seamfs'`), else the process-wide lock, which every write and edit of this process also
 * takes (writes with server-enforced guards take it shared): `'process'`.
 */
export class Moves {
  readonly #ctx: MoveContext
  readonly #renames: Renames

  constructor(ctx: MoveContext) {
    this.#ctx = ctx
    this.#renames = new Renames(ctx)
  }

  /**
   * A file: one DELETE (a delete marker in a versioned bucket), after a HEAD. Guarded: with
   * `If-Match` where the server enforces it (unversioned buckets only: the ETag is the whole
   * version there), else HEAD, check and DELETE under the key's lock. A directory: the marker
   * (empty), `FS_NOT_EMPTY`, or with `recursive` every key below the prefix, counted first.
   * Guarded, a directory has the one directory version: the guard passes while the path is
   * still a directory (no file took its place, which HEAD finds first), checked like a file's
   * guard (under the key's lock where DELETE conditions are not enforced). Deleting the keys
   * below the prefix never deletes a file written at the path meanwhile.
   *
   * The key's lock: where lock objects are used, every remove holds the lock object of the path's
   * key (guarded or not: a DELETE takes no condition, and no seamfs writer of the key may land
   * between the HEAD and it); else the in-process lock. A recursive remove locks the directory's
   * own key, not every key below it.
   */
  async remove(target: FsTarget, { expected, recursive, signal, maxEntries }: RemoveRequest): Promise<FsRemoveOutcome> {
    const { paths, store } = this.#ctx
    const path = target.displayPath
    const rel = paths.relOf(target, 'remove')
    // Core refuses the root first (the root rule); this keeps a hook called directly from touching it.
    if (rel === '') throw FsError.storeRoot('remove', path)
    const key = paths.objectKey(rel)
    const ctx = { verb: 'remove', path, signal } as const
    if (expected === undefined) {
      // The probe tells whether lock objects are used.
      await this.#ctx.probe()
      return this.#ctx.locked([rel], ctx, async (hold) => {
        const revision = await store.head(key, signal)
        if (revision === undefined) return this.#removeDirectory(rel, path, { recursive, signal, maxEntries, guarded: false })
        throwIfAborted(signal, 'remove')
        hold?.assertHeld('remove', path)
        await this.#deleteFile(key, revision, undefined, path)
        return { type: 'file', entries: 1 }
      })
    }
    const [probe, moves] = await Promise.all([this.#ctx.probe(), this.#ctx.probeMoves()])
    const removeChecked = async (hold: LeaseHold | undefined): Promise<FsRemoveOutcome> => {
      const revision = await store.head(key, signal)
      if (revision === undefined) {
        if (!(await isDirectory(this.#ctx, rel, signal))) throw FsError.stale('remove', path, 'gone')
        checkGuard('remove', path, expected, DIRECTORY_VERSION)
        return this.#removeDirectory(rel, path, { recursive, signal, maxEntries, guarded: true })
      }
      checkGuard('remove', path, expected, versionOf(revision))
      throwIfAborted(signal, 'remove')
      const ifMatch = deletesAreGuarded(probe, moves) ? this.#ctx.ifMatch(revision.etag) : undefined
      hold?.assertHeld('remove', path)
      await this.#deleteFile(key, revision, ifMatch, path)
      return { type: 'file', entries: 1 }
    }
    if (deletesAreGuarded(probe, moves)) return removeChecked(undefined)
    if (this.#ctx.requireAtomic) throw FsError.unsupported('remove', path, 'the server does not enforce If-Match on DELETE and requireAtomicGuards is set')
    return this.#ctx.locked([rel], ctx, removeChecked)
  }

  /**
   * `mkdir -p` as one zero-byte marker object `<dir>/` (its ancestors exist through it):
   * 1 HEAD (a file at the path?), 1 LIST (a directory already, with a marker?) and the path
   * check of resolve, together, then 1 PUT when there is no marker yet. A directory that
   * existed only through its files gets a marker too (still `created: false`), so it stays
   * when they go.
   */
  async makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
    const { paths, store } = this.#ctx
    const path = target.displayPath
    const rel = paths.relOf(target, 'create directory')
    if (rel === '') return false
    const marker = paths.childPrefix(rel)
    if (!keyFits(marker)) throw FsError.io('create directory', path, `the marker key would be longer than ${MAX_KEY_BYTES} bytes, the S3 limit`)
    const [file, first, underFile] = await Promise.all([
      store.head(paths.objectKey(rel), signal),
      store.firstKeys(marker, 1, signal),
      this.#ctx.underFile(rel, signal),
    ])
    if (file !== undefined || underFile) throw FsError.notDirectory('create directory', path)
    // `dir/` sorts before every other key that starts with it.
    if (first[0] === marker) return false
    throwIfAborted(signal, 'create directory')
    const put = await store.put(marker, new Uint8Array(0), { contentType: MARKER_CONTENT_TYPE })
    // Unconditional, the PUT fails as a conflict only after a lost answer: the marker tells what it did.
    if (!put.ok && (await lookAfter(store, put, { key: marker, verb: 'create directory', path })) === undefined) {
      throw FsError.io('create directory', path, 'the marker write got no answer, and the marker is not there: nothing changed', {
        cause: put.error,
        retryable: true,
      })
    }
    return first.length === 0
  }

  /** S3 has no rename (`rename: 'copy'`): a file is copied, then its source deleted; see {@link Renames.rename} for the steps, the guards and the locks. */
  rename(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    return this.#renames.rename(from, to, request)
  }

  /**
   * DELETE of the file `key` at the `revision` the caller checked (`ifMatch` where the server
   * enforces it); a refusal is stale (gone or changed). After an attempt that lost its answer, one
   * HEAD tells: gone → removed (by this DELETE, or another); the same revision → nothing changed,
   * retryable; changed, or the HEAD failed → the outcome is unknown, indeterminate.
   */
  async #deleteFile(key: string, revision: Revision, ifMatch: string | undefined, path: string): Promise<void> {
    const { store } = this.#ctx
    const removed = await deleteKey(this.#ctx.store, key, ifMatch)
    if (removed.ok) return
    if (!removed.unanswered) throw await this.#lostDelete(removed, key, 'remove', path)
    const now = await lookAfter(store, removed, { key, verb: 'remove', path })
    if (now === undefined) return
    const unchanged = versionOf(now) === versionOf(revision)
    throw FsError.io(
      'remove',
      path,
      unchanged
        ? 'the delete got no answer, and the file is still there: nothing changed'
        : 'the delete got no answer, and the file has changed since: it may have been removed and written again',
      {
        cause: removed.error,
        retryable: true,
        indeterminate: !unchanged,
      },
    )
  }

  /** A guarded DELETE that was refused, or the source check before it that failed: gone or changed. */
  async #lostDelete(conflict: PutConflict, key: string, verb: FsVerb, path: string): Promise<FsError> {
    if (conflict.status !== 412 && conflict.status !== 404) {
      return FsError.io(verb, path, `the server failed a conditional delete (status ${conflict.status})`, { cause: conflict.error, retryable: true })
    }
    const now = await this.#ctx.store.head(key)
    return FsError.stale(verb, path, now === undefined ? 'gone' : 'changed', conflict.error)
  }

  /** A directory's remove; `guarded`: its guard passed, and a directory gone meanwhile is stale `gone`, not `FS_NOT_FOUND`. */
  async #removeDirectory(rel: string, path: string, how: DirectoryRemove): Promise<FsRemoveOutcome> {
    const { paths, store } = this.#ctx
    const { recursive, signal, maxEntries } = how
    const prefix = paths.childPrefix(rel)
    const gone = (): FsError => (how.guarded ? FsError.stale('remove', path, 'gone') : FsError.notFound('remove', path))
    if (!recursive) {
      const keys = await store.firstKeys(prefix, 2, signal)
      if (keys.length === 0) throw gone()
      if (keys.length > 1 || keys[0] !== prefix) throw FsError.notEmpty('remove', path)
      throwIfAborted(signal, 'remove')
      await store.remove(prefix)
      return { type: 'directory', entries: 1 }
    }
    const tree = await this.#tree(prefix, path, signal, maxEntries)
    if (tree.keys.length === 0) throw gone()
    throwIfAborted(signal, 'remove')
    // Files first, then markers deepest first: a remove that fails part way leaves directories listed.
    const ordered = [...tree.keys.filter((k) => !k.endsWith('/')), ...tree.keys.filter((k) => k.endsWith('/')).sort((a, b) => b.length - a.length)]
    await store.removeAll(ordered)
    return { type: 'directory', entries: tree.entries }
  }

  /**
   * Every key below `prefix`, and how many entries they make: the directory itself, each file
   * and each directory below it (a marker adds none of its own). Listing stops as soon as there
   * are more than `maxEntries`: `FS_TOO_LARGE`, `details.entries` the count reached then.
   */
  async #tree(prefix: string, path: string, signal: AbortSignal | undefined, maxEntries: number): Promise<{ keys: string[]; entries: number }> {
    const keys: string[] = []
    const dirs = new Set<string>()
    let files = 0
    for await (const page of this.#ctx.store.keysUnder(prefix, signal)) {
      for (const key of page) {
        keys.push(key)
        const rest = key.slice(prefix.length)
        for (let at = rest.indexOf('/'); at >= 0; at = rest.indexOf('/', at + 1)) dirs.add(rest.slice(0, at))
        if (!rest.endsWith('/') && rest !== '') files++
      }
      const entries = 1 + files + dirs.size
      if (entries > maxEntries) {
        throw FsError.tooManyEntries('remove', path, entries, maxEntries)
      }
    }
    return { keys, entries: 1 + files + dirs.size }
  }
}
