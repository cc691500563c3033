/**
 * Steps of `Moves.rename` that need no more than the store: which write step 3 is, its
 * conditions, what a refused copy means, the copy's own revision, deleting a versioned source, and
 * undoing a copy.
 *
 * The rule of every undo here: a copy is deleted again only when it is provably this rename's own
 * and nothing else can be lost with it. Its own: it carries this rename's operation id
 * (`x-amz-meta-seamfs-op`, set by the copy itself, `MetadataDirective: REPLACE`), never recognised
 * by its ETag (a content hash another mover's copy of the same file shares). Nothing else lost: in
 * a versioned bucket only the copy's own VersionId is deleted (whatever lay below, a replaced file
 * too, comes back); in
 * an unversioned one only while this rename holds the destination's lock object (no other seamfs
 * writer can have written it between the check and the DELETE) and the destination was absent
 * before the copy. Otherwise the copy is left, the file is at both names, and the error says so.
 */
import { FsError, type FsTarget, type LeaseHold, type RenameRequest } from '@seamfs/core/backend'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import { type Store } from './store.js'
import { OP_ID_META, opIdOf, versionOf, type CopyConditions, type ObjectHeaders, type PutConflict, type Revision } from './revisions.js'

/**
 * The largest object a no-overwrite rename moves by GET + PUT `If-None-Match: *` (held in memory
 * once), where the server enforces that condition on PUT but not on CopyObject. A larger one is
 * copied, and its destination check holds only as far as the lock does.
 */
export const MAX_PUT_RENAME_BYTES = 64 * 1024 ** 2

/** Whether step 3 of a rename is the PUT (see `Moves.rename`). */
export const putsDestination = (source: Revision, overwrite: RenameRequest['overwrite'], probe: S3ProbeResult, moves: S3MoveProbeResult): boolean =>
  overwrite === false && !moves.copyIfNoneMatch && probe.createIfAbsent && source.size <= MAX_PUT_RENAME_BYTES

/** One rename in progress: its names, request, probes, its operation id, and the locks it holds. */
export interface Move {
  readonly fromRel: string
  readonly toRel: string
  readonly from: FsTarget
  readonly to: FsTarget
  readonly request: RenameRequest
  readonly probe: S3ProbeResult
  readonly moves: S3MoveProbeResult
  /** The id the copy carries in its user metadata ({@link OP_ID_META}). */
  readonly opId: string
  /** Holding both keys' locks (in-process, and their lock objects where `hold` is set). */
  readonly locked: boolean
  readonly hold: LeaseHold | undefined
}

/** Step 3 of one rename: the keys, the source revision `V`, the destination as seen, and whether it is a PUT. */
export interface Transfer {
  readonly fromKey: string
  readonly toKey: string
  readonly source: Revision
  readonly dest: Revision | undefined
  readonly viaPut: boolean
}

/** The headers the copy gets: the source's, and this rename's operation id among its user metadata. */
export function copyHeaders(source: Revision, opId: string): ObjectHeaders {
  return { ...source.headers, metadata: { ...source.headers?.metadata, [OP_ID_META]: opId } }
}

/** What became of a copy being undone: deleted again, not there, there and kept, or another writer's object is there. */
export type Undo = 'undone' | 'absent' | 'kept' | 'foreign'

/** A copy that may be undone: where it is, and what its undo needs to know. */
export interface Copied {
  readonly toKey: string
  /** `to` held nothing before the copy, which an unversioned bucket needs: there a replaced file cannot come back. */
  readonly destAbsent: boolean
  /** The `If-Match` form of an ETag for the undo's DELETE, where the server enforces it there. */
  readonly ifMatch: ((etag: string) => string) | undefined
}

/**
 * Deletes the copy at `toKey` again, if it is this rename's (its operation id) and that is safe
 * (see the module's rule); else leaves it.
 * `'absent'`: nothing is there; `'kept'`: the copy is there and stays; `'foreign'`: another object is there.
 */
export async function undoCopy(store: Store, move: Move, { toKey, destAbsent, ifMatch }: Copied): Promise<Undo> {
  const now = await store.head(toKey)
  if (now === undefined) return 'absent'
  if (opIdOf(now) !== move.opId) return 'foreign'
  // Versioned: exactly the copy's own version goes; what `to` held before comes back.
  if (now.versionId !== undefined) {
    await store.remove(toKey, undefined, now.versionId)
    return 'undone'
  }
  if (!destAbsent || move.hold === undefined) return 'kept'
  try {
    move.hold.assertHeld('rename', move.to.displayPath)
  } catch {
    return 'kept'
  }
  const removed = await store.remove(toKey, ifMatch?.(now.etag))
  return removed.ok ? 'undone' : 'kept'
}

/**
 * The source's exact revision (its VersionId, or its ETag where the server checks it), and the
 * destination's state as seen (`dest`), as far as the probes say the copy honours them.
 */
export function copyConditions(
  { source, dest }: Pick<Transfer, 'source' | 'dest'>,
  { request, probe, moves }: Pick<Move, 'request' | 'probe' | 'moves'>,
  ifMatch: (etag: string) => string,
): CopyConditions {
  const { overwrite } = request
  const header = moves.copySourceIfMatch
  const sourceIfMatch = source.versionId === undefined && header !== null ? { header, etag: source.etag } : undefined
  if (overwrite === true) return { sourceIfMatch }
  if (dest === undefined) return { sourceIfMatch, ifNoneMatch: moves.copyIfNoneMatch ? '*' : undefined }
  return { sourceIfMatch, ifMatch: moves.copyIfMatch && !probe.versioned ? ifMatch(dest.etag) : undefined }
}

/** A refused copy: the source changed or went (its condition), else the destination did (its condition); anything else is the server's failure. */
export async function lostCopy(store: Store, conflict: PutConflict, { source, fromKey }: Pick<Transfer, 'source' | 'fromKey'>, move: Move): Promise<FsError> {
  const { from, to, request } = move
  const now = conflict.status === 412 ? await store.head(fromKey) : source
  if (now === undefined) return FsError.stale('rename', from.displayPath, 'gone', conflict.error)
  if (versionOf(now) !== versionOf(source)) return FsError.stale('rename', from.displayPath, 'changed', conflict.error)
  if (conflict.status !== 412) {
    return FsError.io('rename', from.displayPath, `the server failed the copy (status ${conflict.status}); the source was kept`, {
      cause: conflict.error,
      retryable: true,
    })
  }
  return request.overwrite === false
    ? FsError.destinationExists('rename', to.displayPath, conflict.error)
    : FsError.stale('rename', to.displayPath, 'changed', conflict.error)
}

/**
 * The copy's revision. radosgw 16 answers a copy into a versioned bucket without the new
 * VersionId: then one HEAD of the destination finds it, recognised by this rename's operation id.
 * Another object there (a writer outside this process's locks wrote `to` right after the copy)
 * fails the rename: the source is kept, and the copy stays below in `to`'s history.
 */
export async function copyRevision(store: Store, toKey: string, copied: Revision, move: Move): Promise<Revision> {
  if (!move.probe.versioned || copied.versionId !== undefined) return copied
  const now = await store.head(toKey)
  if (now === undefined || opIdOf(now) !== move.opId) {
    // eslint-disable-next-line no-restricted-syntax -- FsError.stale cannot say that the source was kept
    throw FsError.at('FS_STALE_VERSION', 'rename', move.to.displayPath, 'another writer wrote it right after the copy; this rename did not delete the source')
  }
  return now
}

/**
 * A versioned source: its exact version deleted, and whether the name is gone now. One LIST of
 * versions first (is `V` still current, and what lies below it?), DELETE of `V` by VersionId,
 * then a HEAD: an older version that surfaced gets a delete marker (true); a version written
 * meanwhile stays current (false).
 */
export async function removeSourceVersion(store: Store, fromKey: string, versionId: string): Promise<boolean> {
  const { latest, below } = await store.topVersions(fromKey)
  if (latest === undefined || latest.marker || latest.versionId !== versionId) return false
  await store.remove(fromKey, undefined, versionId)
  const now = await store.head(fromKey)
  if (now === undefined) return true
  if (below === undefined || below.marker || now.versionId !== below.versionId) return false
  await store.remove(fromKey)
  return true
}
