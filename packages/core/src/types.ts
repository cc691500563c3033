declare const brand: unique symbol

/** A string a backend mints and consumers must treat as opaque. */
export type Branded<Name extends string> = string & { readonly [brand]: Name }

/**
 * Opaque key for identity and guards. The local backend uses a realpath, a
 * remote one might use an object key or URI. Consumers MUST NOT parse it.
 */
export type FsTargetKey = Branded<'FsTargetKey'>

/**
 * Opaque freshness token: it changes whenever the content changes, whoever
 * changed it. Consumers compare it for equality only.
 */
export type FsVersion = Branded<'FsVersion'>

/** Mints an {@link FsTargetKey}. For backends only; does no validation. */
export function FsTargetKey(value: string): FsTargetKey {
  return value as FsTargetKey
}

/** Mints an {@link FsVersion}. For backends only; does no validation. */
export function FsVersion(value: string): FsVersion {
  return value as FsVersion
}

/** A path resolved by a backend into a stable identity; every operation but `resolve`/`lstat` takes one. */
export interface FsTarget {
  /** Opaque identity: aliases of one file (symlinks, `..`) share it. */
  readonly targetKey: FsTargetKey
  /** The path to show a model or a person. */
  readonly displayPath: string
}

/** What {@link FileSystem.stat} returns for an existing target (symlinks followed). */
export interface FsInfo {
  readonly version: FsVersion
  readonly type: 'file' | 'directory' | 'other'
  /** Byte size of a regular file, when the backend can report it. */
  readonly size?: number
  /** Last modification, in milliseconds since the epoch, where `capabilities.mtime` (the store's clock, not this process's). */
  readonly mtime?: number
}

/** What {@link FileSystem.lstat} returns: like {@link FsInfo}, but the final symlink is not followed. */
export interface FsPathInfo {
  readonly version: FsVersion
  readonly type: 'file' | 'directory' | 'symlink' | 'other'
  readonly size?: number
  readonly mtime?: number
}

/** One direct child from {@link FileSystem.listDir}: metadata only, never content. */
export interface FsDirEntry {
  /** Basename inside the listed directory. */
  readonly name: string
  /** Type after following a symlink; a broken link is `other` (so is, under a sandbox confining reads, a link leading out of its roots). */
  readonly type: 'file' | 'directory' | 'other'
  /** The resolved child, ready for follow-up operations. */
  readonly target: FsTarget
  /** Present when the backend learns it without extra round trips. */
  readonly version?: FsVersion
  /** Byte size of a regular file, when cheaply known. */
  readonly size?: number
  /** Last modification (ms since the epoch), when cheaply known. */
  readonly mtime?: number
}

/**
 * A write guard. `createIfAbsent` rejects an existing target with
 * `FS_NOT_OBSERVED`; `replaceIfVersion` rejects absence or a different version
 * with `FS_STALE_VERSION`. No guard (omitted) means create-or-overwrite.
 */
export type FsWriteIntent = { readonly kind: 'createIfAbsent' } | { readonly kind: 'replaceIfVersion'; readonly version: FsVersion }

/**
 * Outcome of {@link FileSystem.writeText}. Like an edit's, a large `before` is an enumerable
 * property built when first read. `changedLines(outcome, …)` finds the lines the write changed
 * from the bytes, without building `before`.
 */
export interface FsWriteOutcome {
  readonly operation: 'create' | 'update'
  /** Version of the file as this write left it (equals the next `stat` when nobody else wrote). */
  readonly version: FsVersion
  /**
   * Content before the write, LF-normalized and without BOM (the diff basis); `null` for a
   * create, a non-text previous content, one above the backend's diff-basis cap, or when the
   * write was asked not to fetch it (`before: false`).
   */
  readonly before: string | null
  /** Content after the write, LF-normalized and without BOM. */
  readonly after: string
}

/** A literal search/replace. */
export interface FsEditRequest {
  /** Literal, non-empty text to find (matched after CRLF → LF normalization). */
  readonly oldString: string
  /** Literal replacement (`$` is not special). Empty deletes the match. */
  readonly newString: string
  /** Replace every match instead of requiring exactly one. */
  readonly replaceAll: boolean
}

/**
 * Outcome of {@link FileSystem.editText}. `before` and `after` are ordinary enumerable
 * properties, but each string is built when it is first read: an edit whose caller never
 * reads them does not pay for decoding the file twice. `changedLines(outcome, …)` gives the
 * changed lines (what a diff needs) from the bytes, without building either string.
 */
export interface FsEditOutcome {
  readonly version: FsVersion
  /** Content before the edit, LF-normalized, without BOM. */
  readonly before: string
  /** Content after the edit, LF-normalized, without BOM. */
  readonly after: string
}

/** Outcome of {@link FileSystem.writeBytes}. */
export interface FsBytesWriteOutcome {
  readonly operation: 'create' | 'update'
  /** Version of the file as this write left it (equals the next `stat` when nobody else wrote). */
  readonly version: FsVersion
}

/** Outcome of {@link FileSystem.remove}. */
export interface FsRemoveOutcome {
  /** What was removed. */
  readonly type: 'file' | 'directory'
  /** How many entries went: 1 for a file or an empty directory, the whole tree for a recursive remove. */
  readonly entries: number
}

/** Outcome of {@link FileSystem.rename}. */
export interface FsRenameOutcome {
  /** What was moved. */
  readonly type: 'file' | 'directory'
  /** True when a file at the destination was replaced (`overwrite`). */
  readonly replaced: boolean
  /** The version at the destination after the move (equals the next `stat` when nobody else wrote). */
  readonly version: FsVersion
}

/** Outcome of {@link FileSystem.createDirectory}. */
export interface FsCreateDirectoryOutcome {
  /** False when the directory was already there (nothing changed). */
  readonly created: boolean
}

/**
 * A regular file opened by {@link FileSystem.openFile}: what `stat` says of it and its bytes, from one
 * look at the store where the store allows. Read `chunks` to the end, stop early, or call `close()`:
 * each releases the file.
 */
export interface FsOpenFile {
  /** The file's metadata (`type` is `file`), of the content `chunks` yields. */
  readonly info: FsInfo
  /** The bytes, as `streamBytes` yields them; iterated once. */
  readonly chunks: AsyncIterable<Uint8Array>
  /** Releases the file without reading (the rest of) it; idempotent. */
  close(): Promise<void>
}

/** One entry of {@link FileSystem.listTree}: a {@link FsDirEntry} with where it lies below the listed directory. */
export interface FsTreeEntry extends FsDirEntry {
  /** Its names below the listed directory, `/`-joined (`src/index.ts`); `name` is the last of them. */
  readonly path: string
  /** True on a directory entry that is a symbolic link (listed, never entered). */
  readonly link?: boolean
}

/** Options of {@link FileSystem.listTree}. */
export interface ListTreeOptions extends SignalOptions {
  /** Names of directories that are listed but never entered (`.git`), compared exactly. */
  readonly prune?: readonly string[] | undefined
}

/** Options of operations that only take a signal. */
export interface SignalOptions {
  readonly signal?: AbortSignal | undefined
}

/** Options of path-shaped operations (`resolve`, `lstat`). */
export interface ResolveOptions extends SignalOptions {
  /** Base for a relative path; defaults to the backend's own cwd. */
  readonly cwd?: string | undefined
}

/** Options of {@link FileSystem.writeText} (and `writeBytes`, which ignores `before`). */
export interface WriteOptions extends SignalOptions {
  readonly expected?: FsWriteIntent | undefined
  /**
   * Whether the outcome's `before` is wanted (default `true`). With `false` the outcome's `before` is
   * `null`, and the backend does not fetch the previous content at all: on a remote store that saves
   * the download and, where the write is otherwise one request, the round trip before it.
   * Callers that show no diff pass `false`. `operation` (`create` / `update`) and the guards are unchanged.
   */
  readonly before?: boolean | undefined
}

/** Options of {@link FileSystem.editText}. */
export interface EditOptions extends SignalOptions {
  readonly expected?: { readonly version: FsVersion } | undefined
}

/** Options of {@link FileSystem.readBytes}. */
export interface ReadBytesOptions extends SignalOptions {
  /** Refuse a larger file with `FS_TOO_LARGE` before reading it (default and ceiling: the backend's `maxTextBytes`). */
  readonly maxBytes?: number | undefined
}

/** Options of {@link FileSystem.remove}. */
export interface RemoveOptions extends SignalOptions {
  /** Remove only this version of the file (else `FS_STALE_VERSION`); a file guard, never a directory's. */
  readonly expected?: { readonly version: FsVersion } | undefined
  /** Remove a directory with everything below it (bounded: see `FileSystem.remove`). */
  readonly recursive?: boolean | undefined
}

/** Options of {@link FileSystem.rename}. */
export interface RenameOptions extends SignalOptions {
  /** Move only this version of the source file (else `FS_STALE_VERSION`). */
  readonly expected?: { readonly version: FsVersion } | undefined
  /**
   * What may be replaced at the destination: nothing (omitted or `false`: an existing destination is
   * `FS_NOT_OBSERVED`), any file (`true`), or only this version of a file (else `FS_STALE_VERSION`).
   */
  readonly overwrite?: boolean | { readonly version: FsVersion } | undefined
}

/**
 * How a guard is enforced, strongest first:
 * - `atomic`: by the store itself, against any writer (a program that knows nothing of seamfs too);
 * - `seamfs`: among every seamfs writer of the store, in any process on any machine (lock entries
 *   with leases kept in the store); a writer that is not seamfs can still slip between check and commit;
 * - `process`: only among the callers inside this process.
 */
export type GuardStrength = 'atomic' | 'seamfs' | 'process'

/**
 * What a backend can do, declared once. The conformance kit gates its tests on
 * these flags and the tools read them; nobody guesses.
 */
export interface FsCapabilities {
  /** Symlinks exist in the store and are followed by `resolve`/`stat`; `lstat` reports them. */
  readonly symlinks: boolean
  /** Mode bits exist and are preserved across writes. */
  readonly permissions: boolean
  /** `processPath` returns a path a local process can open; otherwise it throws `FS_UNSUPPORTED`. */
  readonly processPath: boolean
  readonly createIfAbsent: GuardStrength
  readonly replaceIfVersion: GuardStrength
  /**
   * What the version token is derived from: `stat` metadata (strong enough only
   * where it has nanosecond times and a change time), a `content-hash`, a store
   * `revision` (ETag, VersionId) or a `generation` counter kept by the backend.
   */
  readonly versionSource: 'stat' | 'content-hash' | 'revision' | 'generation'
  /** A file name may contain a newline. */
  readonly newlineInNames: boolean
  /** Empty directories exist on their own (S3 prefixes do not). */
  readonly emptyDirectories: boolean
  /**
   * The optional operations below: absent or `false` means the operation is `FS_UNSUPPORTED`
   * (a backend written before they existed keeps compiling and says so), and the kit skips
   * their clauses with that reason.
   *
   * `remove` works: files, empty directories, and `recursive` trees.
   */
  readonly remove?: boolean
  /**
   * How `rename` moves a file: `atomic` (the store moves it, content and identity, without copying
   * bytes; a no-overwrite move may be a link then an unlink, so for a moment both names hold it) or
   * `copy` (a guarded copy, then a guarded delete of the source: for a moment both names hold it).
   * Never neither. Guards use the `replaceIfVersion` strength.
   */
  readonly rename?: 'atomic' | 'copy'
  /**
   * How the version guards of `remove` and `rename` (`expected`, `overwrite: { version }`) are
   * enforced, where that differs from `replaceIfVersion` (absent: the same). S3 servers that honour
   * conditional writes but not conditional deletes or copies check these under the process lock.
   */
  readonly removeIfVersion?: GuardStrength
  /** `rename` moves a directory with its content (else a directory source is `FS_UNSUPPORTED`). */
  readonly renameDirectories?: boolean
  /**
   * What `createDirectory` leaves: a `native` directory, or a `marker` (an empty object named
   * `dir/` on stores without directories, which keeps it listed while it is empty).
   */
  readonly createDirectory?: 'native' | 'marker'
  /** `stat` reports `mtime`, the store's last-modification time (`lstat` and `listDir` where it is cheaply known). */
  readonly mtime?: boolean
  /**
   * How `listTree` lists a subtree: `native`, the store lists every entry below a directory at once,
   * a request per page whatever the depth (S3's prefix listing without a delimiter); `walk` (or
   * absent), core walks the directories one listing each, as a caller of `listDir` would.
   */
  readonly listTree?: 'native' | 'walk'
  /**
   * The store does not write (a snapshot, an archive, a read-only export): every mutation
   * (`writeText`, `writeBytes`, `editText`, `remove`, `rename`, `createDirectory`) is
   * `FS_PERMISSION_DENIED` before any I/O, decided by core; the mutation hooks are never called.
   * The kit runs its read-only profile: fixtures are made through the external hooks, and every
   * clause that needs the subject to write is skipped with that reason.
   */
  readonly readOnly?: boolean
  /**
   * Reads are bound to the key: `readText`, `readBytes`, `openFile`, the streams and `listDir` of a
   * target act on what its `targetKey` names when the call runs, and fail (never act elsewhere) when
   * the key no longer leads there: a directory on its way, or the entry itself, replaced by a link
   * since `resolve`. A target whose `displayPath` equals its `targetKey` (an absolute, normalized
   * path) is then what its path names whenever such a read succeeds, so a sandbox over the store
   * reads and lists it without resolving its path again first (a read that fails, a `stat` and a
   * stream are decided the full way). The local backend on Linux binds every read to a descriptor
   * verified at the key; memory checks the key's way link by link. A layer passes the claim on only
   * where it reads through (`FileSystemLayer.readsThrough`). Absent: not bound; the sandbox
   * re-resolves the path of every read. The kit probes the claim with swaps.
   */
  readonly keyBoundReads?: boolean
}
