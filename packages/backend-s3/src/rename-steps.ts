/** Steps of `Moves.rename` that need no more than the store: which write step 3 is, undoing a lost write, deleting a versioned source. */
import type { FsTarget, RenameRequest } from '@seamfs/core/backend'
import type { MoveContext } from './moves.js'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import type { Revision, Store } from './store.js'

/**
 * The largest object a no-overwrite rename moves by GET + PUT `If-None-Match: *` (held in memory
 * once), where the server enforces that condition on PUT but not on CopyObject. A larger one is
 * copied, and its destination check holds only against this process.
 */
export const MAX_PUT_RENAME_BYTES = 64 * 1024 ** 2

/** Whether step 3 of a rename is the PUT (see `Moves.rename`). */
export const putsDestination = (source: Revision, overwrite: RenameRequest['overwrite'], probe: S3ProbeResult, moves: S3MoveProbeResult): boolean =>
  overwrite === false && !moves.copyIfNoneMatch && probe.createIfAbsent && source.size <= MAX_PUT_RENAME_BYTES

/** One rename in progress: its names, request, probes, and whether it holds the locks of both keys. */
export interface Move {
  readonly fromRel: string
  readonly toRel: string
  readonly from: FsTarget
  readonly to: FsTarget
  readonly request: RenameRequest
  readonly probe: S3ProbeResult
  readonly moves: S3MoveProbeResult
  readonly locked: boolean
}

/** Step 3 of one rename: the keys, the source revision `V`, the destination as seen, and whether it is a PUT. */
export interface Transfer {
  readonly fromKey: string
  readonly toKey: string
  readonly source: Revision
  readonly dest: Revision | undefined
  readonly viaPut: boolean
}

/** A write to an absent `to` that got no answer: if `to` now holds the content sent (its ETag), it is deleted again, by that revision. */
export async function undoLostWrite(ctx: MoveContext, toKey: string, etag: string, deletesGuarded: boolean): Promise<void> {
  const { store } = ctx
  const now = await store.head(toKey)
  if (now === undefined || now.etag !== etag) return
  // By VersionId (that version only), or If-Match where enforced, else under the lock this rename holds.
  if (now.versionId !== undefined) await store.remove(toKey, undefined, now.versionId)
  else await store.remove(toKey, deletesGuarded ? ctx.ifMatch(now.etag) : undefined)
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
