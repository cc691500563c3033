import type { LeaseHold } from '@seamfs/core/backend'
import { httpStatusOf, outcomeOf } from './errors.js'
import type { LockContext } from './locks.js'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import type { Paths } from './paths.js'
import type { Store } from './store.js'
import type { PutConflict } from './revisions.js'

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

/** The version guard a conditional DELETE can enforce: only the ETag, so only where the ETag is the whole version (unversioned). */
export const deletesAreGuarded = (probe: S3ProbeResult, moves: S3MoveProbeResult): boolean => moves.deleteIfMatch && !probe.versioned

/** DELETE of `key`: a refusal (`ifMatch`), or any failure after an attempt that lost its answer (`unanswered`), is a {@link PutConflict}. */
export async function deleteKey(store: Store, key: string, ifMatch: string | undefined): Promise<{ readonly ok: true } | PutConflict> {
  try {
    return await store.remove(key, ifMatch)
  } catch (err) {
    if (outcomeOf(err)?.lostAnswer !== true) throw err
    return { ok: false, status: httpStatusOf(err) ?? 0, unanswered: true, error: err }
  }
}

/** Whether `rel` is a directory: some key lies below it. */
export function isDirectory(ctx: MoveContext, rel: string, signal: AbortSignal | undefined): Promise<boolean> {
  return ctx.store.hasKeysUnder(ctx.paths.childPrefix(rel), signal)
}
