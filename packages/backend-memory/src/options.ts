/**
 * One entry of a seed or snapshot tree, keyed by a path relative to the
 * filesystem's cwd (`/`-separated):
 * - a string: a UTF-8 text file;
 * - a `Uint8Array`: a file of raw bytes (what `toJSON` returns for non-UTF-8 content);
 * - `null`: a directory (write the key with a trailing `/`, like `'empty/': null`);
 * - `{ symlink }`: a symbolic link whose text is `symlink`;
 * - `{ content, mode }`: a file with explicit permission bits.
 */
export type MemoryEntry = string | Uint8Array | null | { readonly symlink: string } | { readonly content: string | Uint8Array; readonly mode: number }

/** A whole tree: what `files` seeds and `toJSON()` returns. */
export type MemoryTree = Readonly<Record<string, MemoryEntry>>

import type { FsLimits } from '@seamfs/core'

/** Options of {@link MemoryFileSystem}; the size limits are core's. */
export interface MemoryFileSystemOptions extends FsLimits {
  /** Files to start with, relative to `cwd`. */
  readonly files?: MemoryTree | undefined
  /** Absolute base of relative paths inside the volume (default `/`); created if missing. */
  readonly cwd?: string | undefined
  /**
   * Returns the current time (ms since the epoch). Stamped as atime/mtime on
   * every file this filesystem writes, so snapshots of times are deterministic.
   * Default `Date.now`.
   */
  readonly clock?: (() => number) | undefined
  /**
   * The uid and gid the volume acts as (owner of new files, permission checks).
   * Default: this process's, read once. Fixed per instance, so permission
   * behaviour does not depend on who runs the test.
   */
  readonly owner?: { readonly uid: number; readonly gid: number } | undefined
  /**
   * Mode bits (`0o000`–`0o777`) of files this filesystem creates, and of seed
   * files given as plain content (default `0o600`, owner-only, as on the local
   * and SFTP backends). Existing files keep theirs.
   */
  readonly newFileMode?: number | undefined
}

export const DEFAULT_NEW_FILE_MODE = 0o600
