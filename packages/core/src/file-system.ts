import type {
  EditOptions,
  FsCapabilities,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsPathInfo,
  FsTarget,
  FsWriteOutcome,
  ResolveOptions,
  SignalOptions,
  WriteOptions,
} from './types.js'

/**
 * The filesystem contract every backend implements. Each method lists its rules,
 * one line each; the conformance kit (`@seamfs/conformance`) has a test per rule.
 *
 * Rules common to every method:
 * - every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes;
 * - an aborted `signal` fails with `FS_ABORTED` and changes nothing (a mutation
 *   whose publication has begun completes instead);
 * - network failures are `FS_IO_ERROR` with `retryable: true`.
 */
export abstract class FileSystem {
  /** What this backend can do; declared once, read by the kit and the tools. */
  abstract readonly capabilities: FsCapabilities

  /**
   * Resolves a path into a stable target.
   * - a blank path is `FS_NOT_FOUND`;
   * - a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both;
   * - a relative `opts.cwd` is itself resolved against the backend's cwd;
   * - aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`;
   * - a missing path resolves (it may be created), with the same key before and after creation;
   * - a path through a regular file is `FS_NOT_FOUND`;
   * - `resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it).
   */
  abstract resolve(path: string, opts?: ResolveOptions): Promise<FsTarget>

  /**
   * The absolute path a local process can open for `target`.
   * - throws `FS_UNSUPPORTED` when `capabilities.processPath` is false.
   */
  abstract processPath(target: FsTarget): string

  /** The canonical `file:` (or store-specific) URI of `target`; the backend owns the encoding. */
  abstract fileUrl(target: FsTarget): string

  /**
   * Canonical containment, without parsing keys.
   * - true when `child` is `parent` or a descendant of it; false otherwise (also for a mere name prefix).
   */
  abstract contains(parent: FsTarget, child: FsTarget): boolean

  /**
   * Metadata of the target, symlinks followed; never content.
   * - an absent target (or a broken symlink) is `undefined`, not an error;
   * - `type` is `file`, `directory` or `other`; `size` is the byte size of a file;
   * - `version` is unchanged while the content is unchanged, and changes on every content change.
   */
  abstract stat(target: FsTarget, opts?: SignalOptions): Promise<FsInfo | undefined>

  /**
   * Metadata of the path itself: a final symlink is reported as `symlink`, not followed.
   * - `cwd` follows `resolve`'s rules; an absent path is `undefined`.
   */
  abstract lstat(path: string, opts?: ResolveOptions): Promise<FsPathInfo | undefined>

  /**
   * The whole file as text.
   * - missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`;
   * - a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`;
   * - a leading UTF-8 BOM is not part of the text; line endings are returned as stored.
   */
  abstract readText(target: FsTarget, opts?: SignalOptions): Promise<string>

  /**
   * The whole file as decoded chunks, for large files; same rules as `readText`.
   * - open-time failures reject the returned promise; later failures are thrown by the iterator;
   * - chunk boundaries are meaningless: a multi-byte character is never split;
   * - memory stays bounded by the chunk size, whatever the file size;
   * - the signal is checked between chunks.
   */
  abstract streamText(target: FsTarget, opts?: SignalOptions): Promise<AsyncIterable<string>>

  /**
   * The direct children of a directory, metadata only.
   * - missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`;
   * - entries are sorted by the Unicode code points of their names;
   * - a symlink's type is its target's; a broken one is `other` without metadata;
   * - no file content is read; staging residue of in-flight writes is never listed.
   */
  abstract listDir(target: FsTarget, opts?: SignalOptions): Promise<FsDirEntry[]>

  /**
   * Atomically creates or replaces the file with `content` (stored as given, UTF-8).
   * - a reader sees the old content or the new, whole, never a mix;
   * - a failed or aborted write leaves the old content and no residue in a listing;
   * - missing parent directories are created;
   * - writing a symlink writes its target and keeps the link;
   * - an existing directory or special file is `FS_NOT_REGULAR_FILE`;
   * - `createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten;
   * - `replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`;
   * - of N concurrent guarded writers from one version, exactly one wins;
   * - the outcome says `create` or `update`, and its `version` equals the next `stat`'s.
   */
  abstract writeText(target: FsTarget, content: string, opts?: WriteOptions): Promise<FsWriteOutcome>

  /**
   * Atomically replaces literal text inside one critical section: check, read, match, write.
   * - a malformed request (an empty `oldString`, wrong types) is `FS_EDIT_NOT_FOUND` before any I/O;
   * - a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`;
   * - `expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error;
   * - non-text content is `FS_NOT_TEXT`;
   * - matching is on LF-normalized text (`oldString` and `newString` are normalized too);
   * - an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`;
   * - several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT`;
   * - `$` in `newString` is literal; an empty `newString` deletes the match;
   * - inserted text takes the file's dominant line ending; untouched text keeps its bytes; a BOM stays;
   * - the outcome's `before`/`after` are LF-normalized, without BOM.
   */
  abstract editText(target: FsTarget, edit: FsEditRequest, opts?: EditOptions): Promise<FsEditOutcome>

  /** Releases connections and handles. A no-op where there are none; idempotent. */
  async close(): Promise<void> {}
}
