import type { FileSystem, ObservationPolicy, PolicyOwner } from '@seamfs/core'
import type { ToolsConfig } from '@seamfs/tools'

/** The default of {@link SeamfsBackendOptions.maxTransferBytes}: 10 MiB, deepagents' own limit on binary reads. */
export const DEFAULT_MAX_TRANSFER_BYTES = 10 * 1024 * 1024

/** Options of {@link createSeamfsBackend}. */
export interface SeamfsBackendOptions {
  /** Any seamfs filesystem: memory, local, S3, SFTP, a sandbox or mount table over them. */
  readonly fs: FileSystem
  /**
   * The read-before-write policy. Default: a fresh `ObservationPolicy` (an edit, an overwrite or a
   * delete needs a read of the current version in the session). `false` runs against the bare
   * filesystem: writes and edits are unconditional, as in deepagents' own backends.
   */
  readonly policy?: ObservationPolicy | false | undefined
  /**
   * Whose observations count. Default: per LangGraph thread (the run's `configurable.thread_id`),
   * else one session of this backend. Give one to share or isolate observations yourself.
   */
  readonly session?: PolicyOwner | undefined
  /** The directory of the filesystem the agent sees as `/` (default `.`, the filesystem's cwd). */
  readonly root?: string | undefined
  /** Caps of the seamfs tools behind `read`, `grep`, `glob` (lines, bytes, matches, time). */
  readonly config?: Partial<ToolsConfig> | undefined
  /** The largest file `uploadFiles`, `downloadFiles`, `readRaw` and a binary `read`/`write` move, in bytes (default 10 MiB). */
  readonly maxTransferBytes?: number | undefined
}
