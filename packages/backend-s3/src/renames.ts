/** `rename` over S3: a file's revision written at the destination (PUT or CopyObject), then the source deleted. */
import { checkGuard, FsError, isFsError, throwIfAborted, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { s3ErrorRow } from './errors.js'
import { deleteKey, deletesAreGuarded, isDirectory, type MoveContext } from './move-context.js'
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
import { keyFits, MAX_KEY_BYTES, newOpId, OP_ID_META, opIdOf, versionOf, type PutConflict, type PutResult, type Revision } from './revisions.js'
import { lookAfter } from './writes.js'

/** The most bytes one CopyObject copies (S3's limit); a larger object needs a multipart copy, which this backend does not do. */
export const MAX_COPY_BYTES = 5 * 1024 ** 3

/** The file renames of {@link MoveContext}'s filesystem (`Moves.rename`). */
export class Renames {
  readonly #ctx: MoveContext

  constructor(ctx: MoveContext) {
    this.#ctx = ctx
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
      if (await isDirectory(this.#ctx, fromRel, signal))
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
      isDirectory(this.#ctx, toRel, signal),
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
    const transfer: Transfer = { fromKey, toKey, source, dest, viaPut }
    const copy = await this.#transfer(transfer, move)
    try {
      await this.#removeSource(transfer, move)
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
    const { fromKey, toKey, source, viaPut } = t
    const { from, opId } = move
    let sent: () => Promise<PutResult>
    if (viaPut) {
      const got = await store.getBytes(fromKey, MAX_PUT_RENAME_BYTES, from.displayPath)
      if (got === undefined) throw FsError.stale('rename', from.displayPath, 'gone')
      if (got === 'too large' || versionOf(got.revision) !== versionOf(source)) throw FsError.stale('rename', from.displayPath, 'changed')
      const metadata = { ...got.metadata, [OP_ID_META]: opId }
      sent = () => store.put(toKey, got.bytes, { ifNoneMatch: '*', contentType: got.contentType ?? 'application/octet-stream', metadata })
    } else {
      const conditions = copyConditions(t, move, (etag) => this.#ctx.ifMatch(etag))
      sent = () => store.copy({ key: fromKey, versionId: source.versionId, size: source.size }, toKey, conditions, copyHeaders(source, opId))
    }
    move.hold?.assertHeld('rename', from.displayPath)
    // A failure thrown here lost no answer (PUT and copy return any failure after a lost answer).
    const written = await sent()
    if (!written.ok && written.unanswered) return this.#afterLostAnswer(t, move, written)
    if (!written.ok) throw await lostCopy(store, written, t, move)
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
    const { toKey, dest } = t
    const { from, to, opId } = move
    const path = from.displayPath
    const nothingChanged = (why: string): FsError => FsError.io('rename', path, `${why}; nothing changed`, { cause: written.error, retryable: true })
    const now = await lookAfter(store, written, { key: toKey, verb: 'rename', path })
    const ours = now !== undefined && opIdOf(now) === opId
    if (dest === undefined && written.status !== 412) {
      const copied = { toKey, destAbsent: true, ifMatch: this.#undoIfMatch(move) }
      const undo = ours ? await undoCopy(store, move, copied).catch((): Undo => 'kept') : now === undefined ? 'absent' : 'foreign'
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
    if (written.status === 412 && (unchanged || dest === undefined)) throw await lostCopy(store, written, t, move)
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
  async #removeSource(t: Transfer, move: Move): Promise<void> {
    const { fromKey, source } = t
    const { store } = this.#ctx
    const { from, to, probe, moves } = move
    if (source.versionId !== undefined) {
      if (!(await removeSourceVersion(this.#ctx.store, fromKey, source.versionId))) await this.#sourceChanged(t, move)
      return
    }
    const ifMatch = deletesAreGuarded(probe, moves) ? this.#ctx.ifMatch(source.etag) : undefined
    const now = ifMatch === undefined ? await store.head(fromKey) : source
    if (now === undefined || versionOf(now) !== versionOf(source)) return this.#sourceChanged(t, move)
    this.#assertHeldBeforeDelete(move)
    const removed = await deleteKey(this.#ctx.store, fromKey, ifMatch)
    // After an attempt that lost its answer, the source gone means that attempt (or a retry) deleted it.
    if (!removed.ok && removed.unanswered && (await lookAfter(store, removed, { key: fromKey, verb: 'rename', path: from.displayPath })) === undefined) return
    if (!removed.ok && (removed.unanswered || (removed.status !== 412 && removed.status !== 404))) {
      const failed = removed.unanswered ? 'deleting the source got no answer' : `the server failed to delete the source (status ${removed.status})`
      throw FsError.io('rename', from.displayPath, `the copy at "${to.displayPath}" was made, but ${failed}: the file may be at both names`, {
        cause: removed.error,
        retryable: true,
        // The copy is made; the source stays (the server said so), or is unknown (an answer was lost).
        indeterminate: true,
      })
    }
    if (!removed.ok) await this.#sourceChanged(t, move)
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
  async #sourceChanged({ fromKey, toKey, dest }: Transfer, move: Move): Promise<never> {
    const { from, to } = move
    const copied = { toKey, destAbsent: dest === undefined, ifMatch: this.#undoIfMatch(move) }
    const [now, undo] = await Promise.all([this.#ctx.store.head(fromKey).catch(() => null), undoCopy(this.#ctx.store, move, copied).catch((): Undo => 'kept')])
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
}
