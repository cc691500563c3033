/** `remove`, `rename` and `createDirectory` over S3: deletes, server-side copies and `dir/` markers. */
import {
  checkGuard,
  FsError,
  isFsError,
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
import { httpStatusOf, outcomeOf, s3ErrorRow } from './errors.js'
import type { LockContext } from './locks.js'
import {
  copyConditions,
  copyHeaders,
  copyRevision,
  lostCopy,
  MAX_PUT_RENAME_BYTES,
  putsDestination,
  removeSourceVersion,
  undoCopy,
  type Move,
  type Transfer,
  type Undo,
} from './rename-steps.js'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import type { Paths } from './paths.js'
import { keyFits, MAX_KEY_BYTES, newOpId, OP_ID_META, opIdOf, versionOf, type PutConflict, type PutResult, type Revision, type Store } from './store.js'
import { lookAfter } from './writes.js'

/** The version of every directory (`stat` reports it): directories are key prefixes, nothing about them changes but their listing. */
export const DIRECTORY_VERSION = FsVersion('directory')
/** The Content-Type of a directory marker (what S3 consoles and s3fs use). */
export const MARKER_CONTENT_TYPE = 'application/x-directory'
/** The most bytes one CopyObject copies (S3's limit); a larger object needs a multipart copy, which this backend does not do. */
export const MAX_COPY_BYTES = 5 * 1024 ** 3

/** What the moves need from the filesystem: its namespace, its store, its probes and its path check. */
export interface MoveContext {
  readonly paths: Paths
  readonly store: Store
  probe(): Promise<S3ProbeResult>
  probeMoves(): Promise<S3MoveProbeResult>
  /** Whether a file lies on the path to `rel` (see `S3FileSystem`'s resolve). */
  underFile(rel: string, signal: AbortSignal | undefined): Promise<boolean>
  /**
   * Runs `fn` holding the locks of `rels`: the in-process ones (exclusive), and their lock
   * objects where they are used (then `fn` gets the hold; see `leases.ts`).
   */
  locked<T>(rels: readonly string[], ctx: LockContext, fn: (hold: LeaseHold | undefined) => Promise<T>): Promise<T>
  /** An ETag in the `If-Match` form the server accepts. */
  ifMatch(etag: string): string
  /** `requireAtomicGuards`: a guard the server would not enforce is `FS_UNSUPPORTED`, not a lock. */
  readonly requireAtomic: boolean
}

/** How a directory is removed (see `Moves.remove`). */
interface DirectoryRemove {
  readonly recursive: boolean
  readonly signal: AbortSignal | undefined
  readonly maxEntries: number
  readonly guarded: boolean
}

/** The version guard a conditional DELETE can enforce: only the ETag, so only where the ETag is the whole version (unversioned). */
const deletesAreGuarded = (probe: S3ProbeResult, moves: S3MoveProbeResult): boolean => moves.deleteIfMatch && !probe.versioned

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

  constructor(ctx: MoveContext) {
    this.#ctx = ctx
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
    if (rel === '') throw FsError.unsupported('remove', path, 'the root of the filesystem cannot be removed')
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
        if (!(await this.#isDirectory(rel, signal))) throw FsError.stale('remove', path, 'gone')
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
    const put = await store.put(marker, new Uint8Array(0), undefined, MARKER_CONTENT_TYPE)
    // Unconditional, the PUT fails as a conflict only after a lost answer: the marker tells what it did.
    if (!put.ok && (await lookAfter(store, put, marker, 'create directory', path)) === undefined) {
      throw FsError.io('create directory', path, 'the marker write got no answer, and the marker is not there: nothing changed', {
        cause: put.error,
        retryable: true,
      })
    }
    return first.length === 0
  }

  /**
   * S3 has no rename (`rename: 'copy'`). A file only: `renameDirectories` is false, a directory
   * source is `FS_UNSUPPORTED`. In order:
   * 1. HEAD the source: its revision `V` (missing → `FS_NOT_FOUND`, guarded `FS_STALE_VERSION`);
   *    `expected` is checked against `V`; above 5 GiB (one CopyObject's limit) → `FS_TOO_LARGE`,
   *    `details: { size, limit }`, nothing changes;
   * 2. HEAD and LIST the destination (and the path check of resolve): a directory there, an
   *    existing file without `overwrite`, or another version than `overwrite.version` fail here;
   * 3. the destination is written with exactly `V`, carrying this rename's operation id in its
   *    user metadata (`x-amz-meta-seamfs-op`; the source's Content-Type, other headers and user
   *    metadata kept):
   *    - without `overwrite`, where the server enforces `If-None-Match: *` on PUT but not on
   *      CopyObject (radosgw's unversioned buckets), and `V` has at most
   *      {@link MAX_PUT_RENAME_BYTES} (64 MiB): GET of the source (its ETag must still be `V`'s),
   *      then PUT with `If-None-Match: *`. A destination created by anyone meanwhile, in any
   *      process, refuses it: `FS_NOT_OBSERVED`;
   *    - else CopyObject of `V` (`MetadataDirective: REPLACE`): by VersionId in a versioned
   *      bucket, else with the source's ETag as copy condition (`x-amz-copy-source-if-match`, or
   *      radosgw's `x-amz-copy-if-match`, as the second probe found). Destination conditions
   *      (`If-None-Match: *`, `If-Match`) are sent where the probe saw CopyObject enforce them;
   *      where it did not, the destination check of 2 holds as far as the lock does (below).
   *
   *    A refused write changes nothing: the source changed (`FS_STALE_VERSION` on `from`) or the
   *    destination did (`FS_NOT_OBSERVED`, or `FS_STALE_VERSION` on `to`). A write one of whose
   *    answers was lost (the connection failed) is looked for: a `to` that was absent and now
   *    holds this rename's copy (its operation id) is deleted again where that is provably safe
   *    (`rename-steps.ts`), and the error is `FS_IO_ERROR`, retryable; where it is not, the copy
   *    stays and the error, `indeterminate`, says the file may be at both names; a `to` that held
   *    a file and now holds the copy carries the rename on. An aborted signal is honoured up to
   *    here, not after;
   * 4. delete the source `V`: in a versioned bucket by its VersionId (that version only, for
   *    good: a version written meanwhile stays the current object), then one HEAD (an older
   *    version that surfaced is hidden by a delete marker); in an unversioned bucket `If-Match`
   *    where DELETE enforces it, else HEAD + compare + DELETE. Both names hold the content from
   *    3 to 4: never neither, also when the process is killed in between.
   *
   * Locks: where a condition is not enforced (on radosgw 16: the destination of a copy and the
   * DELETE), steps 1–4 run holding the locks of both keys (taken in key order): the in-process
   * ones, and, where lock objects can be made (`S3ProbeResult.lockObjects`), both keys' lock
   * objects, which every seamfs writer, remove and rename of those keys in any process also
   * holds (`removeIfVersion: 'seamfs'`): renames, writes and removes of a key never interleave,
   * and of N racing renamers exactly one wins; the lock is checked (`assertHeld`) right before
   * the copy and before the DELETE. Without lock objects (a versioned bucket on radosgw, a
   * credential limited to the prefix) only the in-process lock holds (`'process'`). With
   * `requireAtomicGuards`, a rename that would need the lock is `FS_UNSUPPORTED`. The
   * no-overwrite default has the `createIfAbsent` strength where the PUT of 3 is used, else the
   * lock's.
   *
   * If the source changed or went between 3 and 4 (only a writer outside the locks can do
   * that), it is kept, and the rename fails with `FS_STALE_VERSION`: in a versioned bucket always
   * (a version written even just before the DELETE stays current); in an unversioned bucket only
   * when the change came before the HEAD of 4 (no server checks a DELETE condition there). The
   * copy is deleted again only when it is provably this rename's and nothing else goes with it:
   * by its own VersionId (versioned; a file it replaced comes back), or, unversioned, when `to`
   * was absent and this rename holds `to`'s lock object. Otherwise `to` keeps the copy (the file
   * is at both names) and the message says so. Nothing is ever recognised by its content hash.
   */
  async rename(from: FsTarget, to: FsTarget, request: RenameRequest): Promise<FsRenameOutcome> {
    const { paths } = this.#ctx
    const path = from.displayPath
    const fromRel = paths.relOf(from, 'rename')
    const toRel = paths.relOf(to, 'rename')
    if (fromRel === '') throw FsError.unsupported('rename', path, 'directories cannot be renamed on S3 (renameDirectories is false)')
    if (toRel === '') throw request.overwrite === false ? FsError.destinationExists('rename', to.displayPath) : FsError.notRegularFile('rename', to.displayPath)
    if (!keyFits(paths.objectKey(toRel))) throw FsError.io('rename', to.displayPath, `the object key would be longer than ${MAX_KEY_BYTES} bytes, the S3 limit`)
    const [probe, moves] = await Promise.all([this.#ctx.probe(), this.#ctx.probeMoves()])
    const move: Move = { fromRel, toRel, from, to, request, probe, moves, opId: newOpId(), locked: false, hold: undefined }
    if (this.#atomicMove(probe, moves, request)) return this.#move(move)
    if (this.#ctx.requireAtomic)
      throw FsError.unsupported('rename', path, 'the server does not enforce the copy and delete conditions a rename needs, and requireAtomicGuards is set')
    return this.#locked(move)
  }

  /** The move, holding the locks of both keys (their lock objects where used, taken in key order). */
  #locked(move: Move): Promise<FsRenameOutcome> {
    const ctx = { verb: 'rename', path: move.from.displayPath, signal: move.request.signal } as const
    return this.#ctx.locked([move.fromRel, move.toRel], ctx, (hold) => this.#move({ ...move, locked: true, hold }))
  }

  /**
   * Every condition a rename needs is enforced by the server: no lock. (A no-overwrite rename
   * counts on the PUT of step 3 where CopyObject ignores `If-None-Match`; an object too large
   * for it is moved under the lock, see `#move`.)
   */
  #atomicMove(probe: S3ProbeResult, moves: S3MoveProbeResult, { overwrite }: RenameRequest): boolean {
    const source = probe.versioned || moves.copySourceIfMatch !== null
    const noOverwrite = moves.copyIfNoneMatch || probe.createIfAbsent
    const destination = overwrite === true || (overwrite === false ? noOverwrite : moves.copyIfMatch && !probe.versioned)
    return source && destination && deletesAreGuarded(probe, moves)
  }

  async #move(move: Move): Promise<FsRenameOutcome> {
    const { fromRel, toRel, from, to, request, probe, moves } = move
    const { expected, overwrite, signal } = request
    const { paths, store } = this.#ctx
    const path = from.displayPath
    const [fromKey, toKey] = [paths.objectKey(fromRel), paths.objectKey(toRel)]
    const source = await store.head(fromKey, signal)
    if (source === undefined) {
      if (await this.#isDirectory(fromRel, signal))
        throw FsError.unsupported('rename', path, 'directories cannot be renamed on S3 (renameDirectories is false)')
      throw expected === undefined ? FsError.notFound('rename', path) : FsError.stale('rename', path, 'gone')
    }
    checkGuard('rename', path, expected, versionOf(source))
    if (source.size > MAX_COPY_BYTES) {
      // eslint-disable-next-line no-restricted-syntax -- FsError.tooLarge speaks of whole-file text; this limit is one CopyObject's
      throw FsError.at('FS_TOO_LARGE', 'rename', path, `objects above 5 GiB need a multipart copy, which this backend does not do`, {
        details: { size: source.size, limit: MAX_COPY_BYTES },
      })
    }
    const viaPut = putsDestination(source, overwrite, probe, moves)
    if (!move.locked && overwrite === false && !viaPut && !moves.copyIfNoneMatch) {
      // Too large for the PUT, and the copy's destination condition is not enforced: only the lock is left.
      if (this.#ctx.requireAtomic)
        throw FsError.unsupported(
          'rename',
          path,
          `above ${MAX_PUT_RENAME_BYTES} bytes only the lock keeps "${to.displayPath}" absent, and requireAtomicGuards is set`,
        )
      return this.#locked(move)
    }
    const [dest, destIsDirectory, throughFile] = await Promise.all([
      store.head(toKey, signal),
      this.#isDirectory(toRel, signal),
      this.#ctx.underFile(toRel, signal),
    ])
    if (throughFile) throw FsError.throughFile('rename', to.displayPath)
    if (dest === undefined && destIsDirectory) {
      throw overwrite === false ? FsError.destinationExists('rename', to.displayPath) : FsError.notRegularFile('rename', to.displayPath)
    }
    if (dest !== undefined) {
      if (overwrite === false) throw FsError.destinationExists('rename', to.displayPath)
      if (overwrite !== true && versionOf(dest) !== overwrite.version) throw FsError.stale('rename', to.displayPath, 'changed')
    }
    throwIfAborted(signal, 'rename')
    // From here on the rename completes (or fails) without looking at the signal: the copy is published.
    const copy = await this.#transfer({ fromKey, toKey, source, dest, viaPut }, move)
    try {
      await this.#removeSource(fromKey, toKey, source, dest === undefined, move)
    } catch (err) {
      throw this.#halfDone(err, move)
    }
    return { type: 'file', replaced: dest !== undefined, version: versionOf(copy) }
  }

  /**
   * Step 3: the destination written with the source's revision `V` (PUT or CopyObject, see
   * `rename`), carrying this rename's operation id; the new revision. A write whose every answer
   * was lost is looked for at `to` ({@link #afterLostAnswer}).
   */
  async #transfer(t: Transfer, move: Move): Promise<Revision> {
    const { store } = this.#ctx
    const { fromKey, toKey, source, dest, viaPut } = t
    const { from, request, probe, moves, opId } = move
    let sent: () => Promise<PutResult>
    if (viaPut) {
      const got = await store.getBytes(fromKey, MAX_PUT_RENAME_BYTES, from.displayPath)
      if (got === undefined) throw FsError.stale('rename', from.displayPath, 'gone')
      if (got === 'too large' || versionOf(got.revision) !== versionOf(source)) throw FsError.stale('rename', from.displayPath, 'changed')
      const metadata = { ...got.metadata, [OP_ID_META]: opId }
      sent = () => store.put(toKey, got.bytes, { ifNoneMatch: '*' }, got.contentType ?? 'application/octet-stream', metadata)
    } else {
      const conditions = copyConditions(source, dest, request.overwrite, probe, moves, (etag) => this.#ctx.ifMatch(etag))
      sent = () => store.copy({ key: fromKey, versionId: source.versionId, size: source.size }, toKey, conditions, copyHeaders(source, opId))
    }
    move.hold?.assertHeld('rename', from.displayPath)
    // A failure thrown here lost no answer (PUT and copy return any failure after a lost answer).
    const written = await sent()
    if (!written.ok && written.unanswered) return this.#afterLostAnswer(t, move, written)
    if (!written.ok) throw await lostCopy(store, written, source, fromKey, move)
    return viaPut ? written.revision : copyRevision(store, toKey, written.revision, move)
  }

  /**
   * Step 3 failed after an attempt that lost its answer: the copy may be at `to`. One HEAD of `to`
   * tells (a HEAD that fails leaves the outcome unknown: indeterminate):
   * - this rename's copy (its operation id) where `to` was absent: after a refusal (412: the retry
   *   met it), the rename goes on with it; after a failure, it is deleted again where that is
   *   provably safe (`rename-steps.ts`), and the rename fails, retryable, with nothing changed;
   *   where it is not, the copy stays, and the failure is indeterminate;
   * - this rename's copy where `to` held a file (it replaced that file; nothing brings it back in
   *   an unversioned bucket): the rename goes on with it;
   * - `to` as it was: the copy did not land, the rename fails, retryable, nothing changed;
   * - anything else: `to` changed, by this copy or another writer: indeterminate (after a 412 on an
   *   absent `to`, a refusal as {@link lostCopy} says).
   */
  async #afterLostAnswer(t: Transfer, move: Move, written: PutConflict): Promise<Revision> {
    const { store } = this.#ctx
    const { fromKey, toKey, source, dest } = t
    const { from, to, opId } = move
    const path = from.displayPath
    const nothingChanged = (why: string): FsError => FsError.io('rename', path, `${why}; nothing changed`, { cause: written.error, retryable: true })
    const now = await lookAfter(store, written, toKey, 'rename', path)
    const ours = now !== undefined && opIdOf(now) === opId
    if (dest === undefined && written.status !== 412) {
      const undo = ours ? await undoCopy(store, toKey, move, true, this.#undoIfMatch(move)).catch((): Undo => 'kept') : now === undefined ? 'absent' : 'foreign'
      if (undo === 'undone') throw nothingChanged('the copy got no answer; it had landed and was deleted again')
      if (undo !== 'kept') throw nothingChanged(`the copy got no answer and "${to.displayPath}" does not hold it`)
      throw FsError.io('rename', path, `the copy got no answer, and "${to.displayPath}" may hold a copy of the file as well; the source was kept`, {
        cause: written.error,
        retryable: true,
        indeterminate: true,
      })
    }
    if (ours) return now
    const unchanged = dest === undefined ? now === undefined : now !== undefined && versionOf(now) === versionOf(dest)
    // A refusal (the retry met a changed source or destination) with `to` as it was, or absent before: as any refusal.
    if (written.status === 412 && (unchanged || dest === undefined)) throw await lostCopy(store, written, source, fromKey, move)
    if (unchanged) throw nothingChanged(`the copy got no answer and "${to.displayPath}" is as it was`)
    throw FsError.io('rename', path, `the copy got no answer, and "${to.displayPath}" changed since: it may hold the copy; the source was kept`, {
      cause: written.error,
      retryable: true,
      indeterminate: true,
    })
  }

  /**
   * A failure of step 4, after the copy was made: anything but a described outcome (an `FsError`)
   * leaves the rename half done or unknown (both names may hold the file): indeterminate.
   */
  #halfDone(err: unknown, move: Move): unknown {
    if (isFsError(err)) return err
    const reason = s3ErrorRow(err, this.#ctx.store.deadlines).reason
    return FsError.io(
      'rename',
      move.from.displayPath,
      `"${move.to.displayPath}" holds the copy, but deleting the source failed (${reason}): the file may be at both names`,
      {
        cause: err,
        retryable: true,
        indeterminate: true,
      },
    )
  }

  /** Step 4: the source `V` deleted (see `rename`), or, if it changed meanwhile, kept and the rename failed. */
  async #removeSource(fromKey: string, toKey: string, source: Revision, destAbsent: boolean, move: Move): Promise<void> {
    const { store } = this.#ctx
    const { from, to, probe, moves } = move
    if (source.versionId !== undefined) {
      if (!(await removeSourceVersion(this.#ctx.store, fromKey, source.versionId))) await this.#sourceChanged(fromKey, toKey, destAbsent, move)
      return
    }
    const ifMatch = deletesAreGuarded(probe, moves) ? this.#ctx.ifMatch(source.etag) : undefined
    const now = ifMatch === undefined ? await store.head(fromKey) : source
    if (now === undefined || versionOf(now) !== versionOf(source)) return this.#sourceChanged(fromKey, toKey, destAbsent, move)
    this.#assertHeldBeforeDelete(move)
    const removed = await this.#delete(fromKey, ifMatch)
    // After an attempt that lost its answer, the source gone means that attempt (or a retry) deleted it.
    if (!removed.ok && removed.unanswered && (await lookAfter(store, removed, fromKey, 'rename', from.displayPath)) === undefined) return
    if (!removed.ok && (removed.unanswered || (removed.status !== 412 && removed.status !== 404))) {
      const failed = removed.unanswered ? 'deleting the source got no answer' : `the server failed to delete the source (status ${removed.status})`
      throw FsError.io('rename', from.displayPath, `the copy at "${to.displayPath}" was made, but ${failed}: the file may be at both names`, {
        cause: removed.error,
        retryable: true,
        // The copy is made; the source stays (the server said so), or is unknown (an answer was lost).
        indeterminate: true,
      })
    }
    if (!removed.ok) await this.#sourceChanged(fromKey, toKey, destAbsent, move)
  }

  /** The lock objects must still be held before the source's DELETE; if not, the copy stays and the error says so. */
  #assertHeldBeforeDelete(move: Move): void {
    try {
      move.hold?.assertHeld('rename', move.from.displayPath)
    } catch (err) {
      throw FsError.io(
        'rename',
        move.from.displayPath,
        `the lock was not renewed within its lease before the source could be deleted: the source was kept, and "${move.to.displayPath}" holds a copy as well`,
        { cause: err, retryable: true },
      )
    }
  }

  /** `If-Match` for an undo's DELETE, where the server enforces it on DELETE. */
  #undoIfMatch(move: Move): ((etag: string) => string) | undefined {
    return deletesAreGuarded(move.probe, move.moves) ? (etag) => this.#ctx.ifMatch(etag) : undefined
  }

  /**
   * The source changed or went between the copy and its delete (a writer outside the locks: one
   * that is not seamfs, or another process where lock objects cannot be made): it is kept (or it is
   * where that writer put it). The copy is deleted again only where that is provably safe (see
   * `rename-steps.ts`), else `to` keeps it and the file is at both names. Either way the rename
   * fails with `FS_STALE_VERSION`, and its message says which.
   */
  async #sourceChanged(fromKey: string, toKey: string, destAbsent: boolean, move: Move): Promise<never> {
    const { from, to } = move
    const [now, undo] = await Promise.all([
      this.#ctx.store.head(fromKey).catch(() => null),
      undoCopy(this.#ctx.store, toKey, move, destAbsent, this.#undoIfMatch(move)).catch((): Undo => 'kept'),
    ])
    const source = now === undefined ? 'another writer removed or moved the source during the rename' : 'the source changed during the rename; it was kept'
    const outcomes: Record<Undo, string> = {
      undone: 'the copy was deleted again',
      absent: `"${to.displayPath}" no longer holds the copy`,
      foreign: `another writer wrote "${to.displayPath}" after the copy; it is left as it is`,
      kept: `"${to.displayPath}" keeps the copy of the version that was moved`,
    }
    const outcome = outcomes[undo]
    // eslint-disable-next-line no-restricted-syntax -- FsError.stale cannot say what the rename kept and undid
    throw FsError.at('FS_STALE_VERSION', 'rename', from.displayPath, `${source}, and ${outcome}`)
  }

  /**
   * DELETE of the file `key` at the `revision` the caller checked (`ifMatch` where the server
   * enforces it); a refusal is stale (gone or changed). After an attempt that lost its answer, one
   * HEAD tells: gone → removed (by this DELETE, or another); the same revision → nothing changed,
   * retryable; changed, or the HEAD failed → the outcome is unknown, indeterminate.
   */
  async #deleteFile(key: string, revision: Revision, ifMatch: string | undefined, path: string): Promise<void> {
    const { store } = this.#ctx
    const removed = await this.#delete(key, ifMatch)
    if (removed.ok) return
    if (!removed.unanswered) throw await this.#lostDelete(removed, key, 'remove', path)
    const now = await lookAfter(store, removed, key, 'remove', path)
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

  /** DELETE of `key`: a refusal (`ifMatch`), or any failure after an attempt that lost its answer (`unanswered`), is a {@link PutConflict}. */
  async #delete(key: string, ifMatch: string | undefined): Promise<{ readonly ok: true } | PutConflict> {
    try {
      return await this.#ctx.store.remove(key, ifMatch)
    } catch (err) {
      if (outcomeOf(err)?.lostAnswer !== true) throw err
      return { ok: false, status: httpStatusOf(err) ?? 0, unanswered: true, error: err }
    }
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

  #isDirectory(rel: string, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#ctx.store.hasKeysUnder(this.#ctx.paths.childPrefix(rel), signal)
  }
}
