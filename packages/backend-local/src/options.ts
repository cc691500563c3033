import type { FsLimits } from '@seamfs/core/backend'

/** Options of {@link LocalFileSystem}; the size limits (`maxTextBytes`, `diffBasisMaxBytes`) are core's. */
export interface LocalFileSystemOptions extends FsLimits {
  /** Base of relative paths (default `process.cwd()`). A resolution default, not a sandbox. */
  readonly cwd?: string | undefined
  /** Mode bits of newly created files (default `0o600`, owner-only). Existing files keep theirs. */
  readonly newFileMode?: number | undefined
  /**
   * Where guards hold: `'store'` (default) among every seamfs writer of this disk, in any process,
   * through lock entries next to the targets (`replaceIfVersion: 'seamfs'`); `'process'` only
   * among the callers in this process, without lock entries (`replaceIfVersion: 'process'`): for a
   * workspace only this process writes, a few syscalls cheaper per write. Narrowing is explicit.
   */
  readonly lockScope?: 'store' | 'process' | undefined
  /**
   * The lease written into this filesystem's lock entries (ms, default 10 000, at most 120 000):
   * how long a holder on another machine that stopped renewing (frozen, cut off) blocks the others.
   * A holder on this machine that died is taken over at once.
   */
  readonly lockLeaseMs?: number | undefined
  /** How long an operation waits for another writer's lock before a retryable `FS_IO_ERROR` (ms, default 30 000). */
  readonly lockWaitMs?: number | undefined
  /**
   * Test-only fault injection points of the publish procedure.
   * @internal
   */
  readonly hooks?: LocalHooks | undefined
}

/**
 * Fault-injection points inside one write, in order. A hook that throws makes
 * the write fail at that point; tests use them to prove no residue is left.
 * @internal
 */
export interface LocalHooks {
  /** The staging directory exists, the temp file is not yet written. */
  readonly afterStage?: ((stagingDir: string) => void | Promise<void>) | undefined
  /** The temp file is written and fsynced; publication is next. */
  readonly beforeCommit?: ((tempPath: string) => void | Promise<void>) | undefined
  /** The file is published (renamed or linked into place); the directory fsync is next. A throw is ignored. */
  readonly afterCommit?: ((path: string) => void | Promise<void>) | undefined
  /**
   * A remove or rename has checked its entry (`key`, the canonical path) and holds the parent
   * directories open; the unlink, rmdir, link or rename is next (a recursive remove: the tree is
   * counted, its removal is next). A throw fails the operation there.
   */
  readonly beforeMutate?: ((key: string) => void | Promise<void>) | undefined
}

export const DEFAULT_NEW_FILE_MODE = 0o600
