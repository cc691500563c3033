import { beforeChange, releaseChunks, untilAborted } from './abort-wait.js'
import { editInAttempts, writeOutcome } from './outcomes.js'
import { WriteBasis } from './changed-lines.js'
import { assertEditRequests } from './edit.js'
import { FsError, throwIfAborted, type FsVerb } from './errors.js'
import { refuseOverrides } from './final-methods.js'
import { limitsOf, type FsLimits, type OpenedFile } from './hooks.js'
import { sortByName } from './order.js'
import { assertCwdText, assertEditGuard, assertOverwrite, assertPathText, assertTarget, assertWriteIntent } from './paths.js'
import { RootRule } from './root-rule.js'
import { FileSystemHookBase } from './store-hooks.js'
import { byteStream, openFileOf, openStream, releasedUnread, textStream } from './streams.js'
import { decodeText, encodeWriteContent } from './text.js'
import { translateError } from './translate.js'
import { pruneSet, treePages } from './tree.js'
import type {
  EditOptions,
  FsBytesWriteOutcome,
  FsCapabilities,
  FsCreateDirectoryOutcome,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsOpenFile,
  FsPathInfo,
  FsRemoveOutcome,
  FsRenameOutcome,
  FsTarget,
  FsTreeEntry,
  FsWriteOutcome,
  ListTreeOptions,
  ReadBytesOptions,
  RemoveOptions,
  RenameOptions,
  ResolveOptions,
  SignalOptions,
  WriteOptions,
} from './types.js'

/**
 * The filesystem contract. Each public method lists its rules, one line each;
 * the conformance kit (`@seamfs/conformance`) has a test per rule.
 *
 * Two audiences, one class. Consumers call the public methods. Backend authors
 * implement the `protected` hooks (`resolvePath`, `statTarget`, `lstatPath`,
 * `loadBytes`, `openBytes`, `listEntries`, `publishBytes`, `updateBytes`, and
 * `errorRow`), which receive valid input only: the public methods do, once for
 * every backend, the argument validation (path text, `cwd`, target shape, guard
 * kind, edit request), the abort checks, the size limits, UTF-8 decoding and
 * encoding, the literal edit, the listing order, the outcome shapes, and the
 * translation of anything that is not an `FsError` through the backend's
 * `errorRow` table. A hook throws the store's own errors or `FsError`s built
 * with the named constructors (`FsError.notFound(verb, path)`…); how hooks answer
 * is in {@link FileSystemHookBase}.
 *
 * Rules common to every method:
 * - every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes;
 * - an aborted `signal` fails with `FS_ABORTED` and changes nothing, unless flagged `indeterminate`;
 *   the abort is honoured at once, also while the store has not answered (a change to SPEC's
 *   "a mutation whose publication has begun completes instead"): a read fails at the abort,
 *   a mutation's hook gets `ABORT_GRACE_MS` (20 ms) to answer by itself, then the call fails flagged
 *   `indeterminate` (it may still land), and the hook's late answer is consumed and dropped;
 * - a mutation that fails without `indeterminate` did not happen; one flagged `indeterminate` (its
 *   answer was lost: a connection died with it in flight, or the abort above) may have;
 * - every failure names its operation and path in the fields `verb` and `path`;
 * - a store that does not write (`capabilities.readOnly`) refuses every mutation with `FS_PERMISSION_DENIED`
 *   before any I/O, and nothing changes;
 * - the public methods are final: a class that overrides one is refused at construction with a `TypeError`
 *   naming the method and its hook; `fileUrl`, `contains` and `close` are the backend's own.
 *
 * Network failures are `FS_IO_ERROR` with `retryable: true`. The kit cannot cut a
 * connection, so each remote backend proves this in its own fault tests (a proxy on
 * 127.0.0.1 that drops the connection mid-transfer).
 */
export abstract class FileSystem extends FileSystemHookBase {
  /** What this backend can do; declared once, read by the kit and the tools. */
  abstract readonly capabilities: FsCapabilities
  /** The root rule, with the root's key once known. */
  readonly #root = new RootRule()
  /** The largest file `readText`/`editText` hold as one string (see {@link FsLimits}). */
  readonly maxTextBytes: number
  /** The largest previous content a write outcome's `before` decodes (see {@link FsLimits}). */
  readonly diffBasisMaxBytes: number
  /** The most entries a recursive `remove` takes down (see {@link FsLimits}). */
  readonly maxRemoveEntries: number

  constructor(limits: Readonly<FsLimits> = {}) {
    super()
    refuseOverrides(new.target.prototype, FileSystem.prototype)
    ;({ maxTextBytes: this.maxTextBytes, diffBasisMaxBytes: this.diffBasisMaxBytes, maxRemoveEntries: this.maxRemoveEntries } = limitsOf(limits))
  }

  /**
   * Resolves a path into a stable target.
   * - a blank path, a NUL byte or a lone surrogate is `FS_NOT_FOUND`; a NUL or a lone surrogate in `cwd` too;
   * - a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both;
   * - a relative `opts.cwd` is itself resolved against the backend's cwd;
   * - aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`;
   * - a missing path resolves (it may be created), with the same key before and after creation;
   * - a path through a regular file is `FS_NOT_FOUND`;
   * - `resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it);
   * - names are exact: two names that differ in case or in Unicode normalization are two files (a store that folds either does not conform).
   */
  async resolve(path: string, opts?: ResolveOptions): Promise<FsTarget> {
    const cwd = opts?.cwd
    const signal = opts?.signal
    throwIfAborted(signal, 'resolve', String(path))
    let target: FsTarget
    try {
      assertPathText(path, 'resolve')
      assertCwdText(cwd, path, 'resolve')
      target = await untilAborted(this.resolvePath(path, cwd, signal), signal, 'resolve')
    } catch (err) {
      throw this.#translate(err, 'resolve', String(path))
    }
    throwIfAborted(signal, 'resolve', target.displayPath)
    return target
  }

  /**
   * The absolute path a local process can open for `target`.
   * - throws `FS_UNSUPPORTED` when `capabilities.processPath` is false.
   */
  processPath(target: FsTarget): string {
    assertTarget(target, 'resolve')
    if (!this.capabilities.processPath) {
      throw FsError.unsupported('resolve', target.displayPath, 'this store has no path a local process can open')
    }
    return this.processPathOf(target)
  }

  /** The canonical `file:` (or store-specific) URI of `target`; the backend owns the encoding. */
  abstract fileUrl(target: FsTarget): string

  /**
   * Canonical containment, without parsing keys.
   * - true when `child` is `parent` or a descendant of it; false otherwise (also for a mere name prefix).
   */
  abstract contains(parent: FsTarget, child: FsTarget): boolean

  /**
   * Metadata of the target, symlinks followed; never content.
   * - an absent target (or a broken symlink, a link loop, a path through a file) is `undefined`, not an error;
   * - `type` is `file`, `directory` or `other`; `size` is the byte size of a file;
   * - `version` is unchanged while the content is unchanged, and changes on every content change.
   */
  async stat(target: FsTarget, opts?: SignalOptions): Promise<FsInfo | undefined> {
    const signal = opts?.signal
    assertTarget(target, 'stat')
    throwIfAborted(signal, 'stat', target.displayPath)
    let info: FsInfo | undefined
    try {
      info = await untilAborted(this.statTarget(target, signal), signal, 'stat')
    } catch (err) {
      info = this.#absent(err, 'stat', target.displayPath)
    }
    throwIfAborted(signal, 'stat', target.displayPath)
    return info
  }

  /**
   * Metadata of the path itself: a final symlink is reported as `symlink`, not followed.
   * - path text and `cwd` follow `resolve`'s rules; an absent path is `undefined`;
   * - a path through a regular file, or through a link loop, is `undefined` (absent), as in `stat`.
   */
  async lstat(path: string, opts?: ResolveOptions): Promise<FsPathInfo | undefined> {
    const cwd = opts?.cwd
    const signal = opts?.signal
    assertPathText(path, 'lstat')
    assertCwdText(cwd, path, 'lstat')
    throwIfAborted(signal, 'lstat', path)
    let info: FsPathInfo | undefined
    try {
      info = await untilAborted(this.lstatPath(path, cwd, signal), signal, 'lstat')
    } catch (err) {
      info = this.#absent(err, 'lstat', path)
    }
    throwIfAborted(signal, 'lstat', path)
    return info
  }

  /**
   * The whole file as text.
   * - missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`;
   * - a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`;
   * - a leading UTF-8 BOM is not part of the text; line endings are returned as stored;
   * - a file above `maxTextBytes` (whose text may not fit one JavaScript string) is `FS_TOO_LARGE`.
   */
  async readText(target: FsTarget, opts?: SignalOptions): Promise<string> {
    const signal = opts?.signal
    assertTarget(target, 'read')
    const path = target.displayPath
    throwIfAborted(signal, 'read', path)
    let text: string
    try {
      const maxBytes = this.maxTextBytes
      const bytes = await untilAborted(this.loadBytes(target, { signal, maxBytes, transient: true }), signal, 'read')
      if (bytes.length > maxBytes) throw FsError.tooLarge('read', path, bytes.length, maxBytes)
      text = decodeText(bytes, path, 'read')
    } catch (err) {
      throw this.#translate(err, 'read', path)
    }
    throwIfAborted(signal, 'read', path)
    return text
  }

  /**
   * The whole file as decoded chunks, for large files; same rules as `readText`, but no size limit.
   * - open-time failures reject the returned promise; later failures are thrown by the iterator;
   * - chunk boundaries are meaningless: a multi-byte character is never split;
   * - memory stays bounded by the chunk size, whatever the file size;
   * - the signal is checked between chunks; stopping early releases the file.
   */
  async streamText(target: FsTarget, opts?: SignalOptions): Promise<AsyncIterable<string>> {
    const signal = opts?.signal
    assertTarget(target, 'read')
    const translate = (err: unknown): FsError => this.#translate(err, 'read', target.displayPath)
    const source = await openStream(() => this.openBytes(target, signal), target.displayPath, signal, translate)
    return releasedUnread(textStream(source, target.displayPath, signal, translate), source)
  }

  /**
   * The whole file as raw byte chunks, exactly as stored (no decoding, no BOM handling), for large
   * or binary files: `streamText`'s rules but decoding, no size limit.
   * - open-time failures reject the returned promise (missing is `FS_NOT_FOUND`, a directory or special
   *   file `FS_NOT_REGULAR_FILE`); later failures are thrown by the iterator;
   * - chunk boundaries are meaningless; concatenated, the chunks are the file's bytes;
   * - a chunk is the caller's until it asks for the next one: the backend may reuse its buffer
   *   afterwards, so copy a chunk to keep it (`new Uint8Array(chunk)`: a `Buffer`'s `slice` does not copy);
   * - memory stays bounded by the chunk size, whatever the file size;
   * - the signal is checked between chunks; stopping early releases the file.
   */
  async streamBytes(target: FsTarget, opts?: SignalOptions): Promise<AsyncIterable<Uint8Array>> {
    const signal = opts?.signal
    assertTarget(target, 'read')
    const translate = (err: unknown): FsError => this.#translate(err, 'read', target.displayPath)
    const source = await openStream(() => this.openBytes(target, signal), target.displayPath, signal, translate)
    return releasedUnread(byteStream(source, target.displayPath, signal, translate), source)
  }

  /**
   * A regular file's metadata and its bytes, from one look at the store where the store allows (one GET
   * on S3, one descriptor locally): what `stat` followed by `streamBytes` gives, without the second trip.
   * - missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`; both reject the returned promise;
   * - `info` is what `stat` says of the file (`type` is `file`, `size` its byte size) and its `version` never names newer content than
   *   `chunks` yields: a guard built on it fails `FS_STALE_VERSION` if the file changed since (a backend that needs two looks takes the version first);
   * - `chunks` follow `streamBytes`' rules: concatenated they are the file's bytes; a chunk is the caller's until it asks for the next one;
   *   the signal is checked between chunks; later failures are thrown by the iterator;
   * - reading `chunks` to the end, stopping early or `close()` releases the file; `close()` is idempotent.
   */
  async openFile(target: FsTarget, opts?: SignalOptions): Promise<FsOpenFile> {
    const signal = opts?.signal
    assertTarget(target, 'read')
    const path = target.displayPath
    const translate = (err: unknown): FsError => this.#translate(err, 'read', path)
    throwIfAborted(signal, 'read', path)
    let opened: OpenedFile
    try {
      opened = await untilAborted(this.openTarget(target, signal), signal, 'read', releaseLate)
    } catch (err) {
      throw translate(err)
    }
    if (signal?.aborted === true || opened.info.type !== 'file') {
      // Aborted while opening (or a hook that answered a non-file): what was opened goes first.
      await releaseChunks(opened.chunks)
      throw signal?.aborted === true ? FsError.aborted('read', signal.reason, { path }) : FsError.notRegularFile('read', path)
    }
    return openFileOf(opened.info, opened.chunks, path, signal, translate)
  }

  /**
   * The direct children of a directory, metadata only.
   * - missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`;
   * - entries are sorted by the Unicode code points of their names;
   * - a symlink's type is its target's; a broken one is `other` without metadata;
   * - an entry's `target` is what `resolve` gives its path: a dangling link's is the missing path it names; a link that does not resolve (a loop, a path through a file) keeps its own path;
   * - no file content is read; staging residue of in-flight writes is never listed.
   */
  async listDir(target: FsTarget, opts?: SignalOptions): Promise<FsDirEntry[]> {
    const signal = opts?.signal
    assertTarget(target, 'list')
    throwIfAborted(signal, 'list', target.displayPath)
    let entries: FsDirEntry[]
    try {
      entries = sortByName(await untilAborted(this.listEntries(target, signal), signal, 'list'))
    } catch (err) {
      throw this.#translate(err, 'list', target.displayPath)
    }
    throwIfAborted(signal, 'list', target.displayPath)
    return entries
  }

  /**
   * Every entry below a directory, metadata only, a page at a time: what `listDir` gives of the
   * directory and of each directory below it, in one call. Where the store lists a subtree at once
   * (`capabilities.listTree: 'native'`: S3's prefix listing, a request per page whatever the depth)
   * it is asked once; elsewhere core walks the directories.
   * - missing is `FS_NOT_FOUND`; what `stat` reports as a file or other is `FS_NOT_DIRECTORY`; both reject the returned promise;
   * - each entry below the directory comes once, with `path` (its names below the directory, `/`-joined) and the fields `listDir` gives it;
   * - a symlink to a directory is listed with `link: true` and never entered; a directory named in `prune` is listed and never entered;
   * - pages, and the entries of a page, come in any order; no file content is read; staging residue of in-flight writes is never listed;
   * - a directory below that is gone by the time it is listed is left out; any other failure is thrown by the iterator;
   * - the signal is checked between pages; a `prune` that is not an array of strings is `FS_UNSUPPORTED` before any I/O.
   */
  async listTree(target: FsTarget, opts?: ListTreeOptions): Promise<AsyncIterable<FsTreeEntry[]>> {
    const signal = opts?.signal
    assertTarget(target, 'list')
    const path = target.displayPath
    throwIfAborted(signal, 'list', path)
    const translate = (err: unknown): FsError => this.#translate(err, 'list', path)
    try {
      const prune = pruneSet(opts?.prune, path)
      const pages = await untilAborted(this.listSubtree(target, { signal, prune }), signal, 'list', (late) => void releaseChunks(late))
      return treePages(pages, path, signal, translate)
    } catch (err) {
      throw translate(err)
    }
  }

  /**
   * Atomically creates or replaces the file with `content` (stored as given, UTF-8).
   * - a reader sees the old content or the new, whole, never a mix;
   * - a failed or aborted write leaves the old content and no residue in a listing;
   * - missing parent directories are created;
   * - writing a symlink writes its target and keeps the link;
   * - an existing directory or special file is `FS_NOT_REGULAR_FILE`;
   * - where `capabilities.permissions`, an existing file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444)
   *   is `FS_PERMISSION_DENIED` and keeps its content, mode and version; `createIfAbsent` on it is still `FS_NOT_OBSERVED`;
   * - content that is not a string, or holds a lone surrogate, is `FS_NOT_TEXT`; above `maxTextBytes` it is `FS_TOO_LARGE`;
   * - content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM;
   * - a version of deleted content never guards a re-created file (where versions derive from content, equal content carries an equal version);
   * - an unknown guard kind is `FS_UNSUPPORTED`, never dropped;
   * - `createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten;
   * - `replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`;
   * - of N concurrent guarded writers from one version, exactly one wins;
   * - the outcome says `create` or `update`, and its `version` equals the next `stat`'s;
   * - the outcome's `before` is the previous text (LF-normalized, without BOM) or `null`; `after` is `content` LF-normalized, without a leading BOM;
   * - `before: false` makes the outcome's `before` `null` and asks the backend not to fetch the previous content
   *   (`beforeMaxBytes` 0); every other rule holds as without it; a `before` that is not a boolean is `FS_UNSUPPORTED` before any I/O.
   */
  async writeText(target: FsTarget, content: string, opts?: WriteOptions): Promise<FsWriteOutcome> {
    const expected = opts?.expected
    const signal = opts?.signal
    const wanted = opts?.before
    assertTarget(target, 'write')
    const path = target.displayPath
    throwIfAborted(signal, 'write', path)
    try {
      assertWriteIntent(expected, path)
      if (wanted !== undefined && typeof wanted !== 'boolean') throw FsError.unsupported('write', path, 'before must be a boolean')
      this.#refuseReadOnly('write', path)
      const bytes = encodeWriteContent(content, path, this.maxTextBytes)
      const beforeMaxBytes = wanted === false ? 0 : this.diffBasisMaxBytes
      let early: WriteBasis | undefined
      const onBefore = (before: Uint8Array): void => void (early ??= new WriteBasis(before, bytes))
      const result = await untilAborted(this.publishBytes(target, bytes, { expected, signal, beforeMaxBytes, onBefore }), signal, 'write')
      return writeOutcome(result, content, bytes, beforeMaxBytes, early)
    } catch (err) {
      throw this.#translate(err, 'write', path)
    }
  }

  /**
   * Atomically replaces literal text inside one critical section: check, read, match, write.
   *
   * Time and memory are linear in the file, whatever the request: matches are counted and the
   * result's size projected before anything is built (a `replaceAll` that would pass
   * `maxTextBytes` allocates nothing), one call replaces at most `MAX_EDIT_MATCHES` (1,000,000)
   * matches and searches at most `MAX_EDIT_SCAN_BYTES` (1 GiB) of text over all its edits (past
   * either, `FS_TOO_LARGE`). The edit holds the thread inside the backend's critical section for
   * about 25 ms at most: one that needs longer is finished outside it, giving the event loop a turn
   * every 10 ms and checking the signal (an abort then is `FS_ABORTED`, nothing written), and is
   * published by a second critical section only if the file still holds the bytes it was computed
   * from; otherwise it is computed again, and after three tries it is `FS_STALE_VERSION` (retryable).
   *
   * - `edit` is one request or a list of them, applied in order (each to the text the previous one
   *   left) inside the one critical section, all or nothing: if any fails, nothing is written, and the
   *   error names it (`edit N of M: …`, `details.edit` its 0-based index); `before` is the file as
   *   read, `after` the text after the last edit;
   * - an empty list, or one of more than 1,000 edits, is `FS_EDIT_NOT_FOUND` before any I/O;
   * - a malformed request (an empty `oldString`, wrong types) is `FS_EDIT_NOT_FOUND` before any I/O;
   * - a `newString` with a lone surrogate is `FS_NOT_TEXT`, as for `writeText`; such an `oldString` is `FS_EDIT_NOT_FOUND`;
   * - a malformed `expected` (not `{ version: string }`) is `FS_UNSUPPORTED` before any I/O;
   * - a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`;
   * - where `capabilities.permissions`, a file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444)
   *   is `FS_PERMISSION_DENIED` and keeps its content, mode and version;
   * - `expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error;
   * - concurrent unguarded edits of one file are serialized: none is lost;
   * - non-text content is `FS_NOT_TEXT`; a file above `maxTextBytes`, or a result that would be, is `FS_TOO_LARGE` and the file is left untouched;
   * - matching is on LF-normalized text (`oldString` and `newString` are normalized too);
   * - an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`;
   * - several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT` (`details.matches` says how many);
   * - `$` in `newString` is literal; an empty `newString` deletes the match;
   * - inserted text takes the file's dominant line ending; untouched text keeps its bytes; a BOM stays;
   * - the outcome's `before`/`after` are LF-normalized, without BOM.
   */
  async editText(target: FsTarget, edit: FsEditRequest | readonly FsEditRequest[], opts?: EditOptions): Promise<FsEditOutcome> {
    const expected = opts?.expected
    const signal = opts?.signal
    assertTarget(target, 'edit')
    const path = target.displayPath
    throwIfAborted(signal, 'edit', path)
    try {
      assertEditRequests(edit)
      assertEditGuard(expected, path)
      this.#refuseReadOnly('edit', path)
      const maxBytes = this.maxTextBytes
      const update = (transform: (bytes: Uint8Array) => Uint8Array) => this.updateBytes(target, { expected, signal, maxBytes }, transform)
      return await editInAttempts({ edit, path, maxBytes, signal, update })
    } catch (err) {
      throw this.#translate(err, 'edit', path)
    }
  }

  /**
   * The whole file as bytes, exactly as stored (no decoding, no BOM handling).
   * - missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`;
   * - a file above `maxBytes` (default and ceiling `maxTextBytes`) is `FS_TOO_LARGE`, refused before its content is read;
   * - `maxBytes` that is not a non-negative integer is `FS_UNSUPPORTED` before any I/O;
   * - the bytes are the caller's: changing them changes nothing stored;
   * - they are an array of their own: its `buffer` holds them and nothing else (`byteOffset` 0, no other
   *   bytes of the process beside them, as a view of Node's shared `Buffer` pool would show); core copies
   *   a store's answer that is not.
   */
  async readBytes(target: FsTarget, opts?: ReadBytesOptions): Promise<Uint8Array> {
    const signal = opts?.signal
    const asked = opts?.maxBytes
    assertTarget(target, 'read')
    const path = target.displayPath
    throwIfAborted(signal, 'read', path)
    let bytes: Uint8Array
    try {
      if (asked !== undefined && (!Number.isSafeInteger(asked) || asked < 0)) {
        throw FsError.unsupported('read', path, 'maxBytes must be a non-negative integer')
      }
      const maxBytes = Math.min(asked ?? this.maxTextBytes, this.maxTextBytes)
      bytes = await untilAborted(this.loadBytes(target, { signal, maxBytes, transient: false }), signal, 'read')
      if (bytes.length > maxBytes) throw FsError.tooLarge('read', path, bytes.length, maxBytes)
      bytes = ownArray(bytes)
    } catch (err) {
      throw this.#translate(err, 'read', path)
    }
    throwIfAborted(signal, 'read', path)
    return bytes
  }

  /**
   * Atomically creates or replaces the file with `bytes`, stored exactly as given; every rule of
   * `writeText` about atomicity, residue, parents, symlinks, non-files, permissions and guards holds.
   * - content that is not a `Uint8Array` is `FS_UNSUPPORTED`; above `maxTextBytes` it is `FS_TOO_LARGE`;
   * - the bytes are copied before the call returns: changing the array afterwards changes nothing written;
   * - the outcome says `create` or `update`, and its `version` equals the next `stat`'s; `readBytes` returns the bytes unchanged.
   */
  async writeBytes(target: FsTarget, bytes: Uint8Array, opts?: WriteOptions): Promise<FsBytesWriteOutcome> {
    const expected = opts?.expected
    const signal = opts?.signal
    assertTarget(target, 'write')
    const path = target.displayPath
    // Copied synchronously: a caller that reuses its buffer after the call cannot tear the write. The
    // constructor, not `slice`: `slice` builds through the array's species, which may hand back a caller's view.
    const owned = bytes instanceof Uint8Array ? new Uint8Array(bytes) : undefined
    throwIfAborted(signal, 'write', path)
    try {
      assertWriteIntent(expected, path)
      if (owned === undefined) throw FsError.unsupported('write', path, 'content must be a Uint8Array')
      this.#refuseReadOnly('write', path)
      if (owned.length > this.maxTextBytes) throw FsError.tooLarge('write', path, owned.length, this.maxTextBytes)
      const result = await untilAborted(this.publishBytes(target, owned, { expected, signal, beforeMaxBytes: 0 }), signal, 'write')
      return { operation: result.created ? 'create' : 'update', version: result.version }
    } catch (err) {
      throw this.#translate(err, 'write', path)
    }
  }

  /**
   * Removes a file, or a directory. Needs `capabilities.remove` (else `FS_UNSUPPORTED` before any I/O).
   * - missing is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`;
   * - a target resolved through a symlink names the link's target: that file is removed, the link stays (as writes write through links);
   * - `expected.version` removes only that version of a file; another one is `FS_STALE_VERSION` and nothing is removed;
   *   the guard holds with `capabilities.removeIfVersion` strength (absent: `replaceIfVersion`'s), and of N concurrent guarded removers exactly one wins;
   * - `expected` may name a directory's version (as `stat` reports it): the directory goes only while it has it, and a file
   *   that took its place is `FS_STALE_VERSION` (so a caller that saw a directory never removes an unseen file); a malformed `expected` or `recursive` is `FS_UNSUPPORTED`;
   * - a directory with entries is `FS_NOT_EMPTY` unless `recursive`, and nothing is removed;
   * - `recursive` removes the directory and everything below it; symlinks inside are removed, never followed;
   *   a tree of more than `maxRemoveEntries` (default 10,000) entries is `FS_TOO_LARGE` (`details.entries`) before anything is removed;
   *   a recursive remove is not atomic: one that fails part way leaves the entries it had not reached;
   * - the store's root (the directory `rootTarget` names: `resolve('/')`, or a backend's `root` scope) is never
   *   removed: `FS_PERMISSION_DENIED` before any change, on every backend;
   * - after a remove, `stat` is `undefined` and the parent's listing no longer shows the name; the outcome counts the entries removed.
   */
  async remove(target: FsTarget, opts: RemoveOptions = {}): Promise<FsRemoveOutcome> {
    const { expected, recursive, signal } = opts ?? {}
    assertTarget(target, 'remove')
    const path = target.displayPath
    return this.#run('remove', path, signal, async () => {
      assertEditGuard(expected, path, 'remove')
      if (recursive !== undefined && typeof recursive !== 'boolean') throw FsError.unsupported('remove', path, 'recursive must be a boolean')
      this.#refuseReadOnly('remove', path)
      if (this.capabilities.remove !== true) throw FsError.unsupported('remove', path, 'this store does not remove files')
      await this.#root.refuse([target], 'remove', { signal, lookup: () => this.rootTarget(signal), translate: (err) => this.#translate(err, 'remove', '/') })
      return untilAborted(this.removeTarget(target, { expected, recursive: recursive === true, signal, maxEntries: this.maxRemoveEntries }), signal, 'remove')
    })
  }

  /**
   * Moves the file (or, where `capabilities.renameDirectories`, the directory) at `from` to `to`.
   * Needs `capabilities.rename` (else `FS_UNSUPPORTED` before any I/O).
   * - missing `from` is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`;
   *   a directory where `renameDirectories` is false is `FS_UNSUPPORTED`; `expected` may name a directory's version, as for `remove`;
   *   a directory never replaces anything: an existing `to` is `FS_NOT_OBSERVED`, or `FS_UNSUPPORTED` with `overwrite`;
   * - `expected.version` moves only that version of the file; another one is `FS_STALE_VERSION` and nothing changes;
   * - an existing `to` is `FS_NOT_OBSERVED` unless `overwrite`; `overwrite: true` replaces a file there,
   *   `overwrite: { version }` only that version of it (else `FS_STALE_VERSION`); a missing `to` is created whatever `overwrite` says; a directory at `to` is never replaced
   *   (`FS_NOT_OBSERVED`, or `FS_NOT_REGULAR_FILE` with `overwrite`); a malformed `expected` or `overwrite` is `FS_UNSUPPORTED`;
   * - missing parent directories of `to` are created; `to` inside the directory `from` is `FS_UNSUPPORTED`;
   * - `from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version (a layer's
   *   fence still applies: it reaches layers through the `renameInPlace` hook);
   * - the store's root is never moved, nor anything moved onto it: `FS_PERMISSION_DENIED`, as for `remove`;
   * - at every moment at least one of the two names holds the whole content; afterwards only `to` does;
   * - a failed or aborted rename leaves both names as they were; of N concurrent renamers of one version exactly one wins;
   * - the outcome's `version` equals the next `stat` of `to`.
   */
  async rename(from: FsTarget, to: FsTarget, opts: RenameOptions = {}): Promise<FsRenameOutcome> {
    const { expected, overwrite, signal } = opts ?? {}
    assertTarget(from, 'rename')
    assertTarget(to, 'rename')
    const path = from.displayPath
    return this.#run('rename', path, signal, async () => {
      assertEditGuard(expected, path, 'rename')
      assertOverwrite(overwrite, path)
      this.#refuseReadOnly('rename', path)
      if (this.capabilities.rename === undefined) throw FsError.unsupported('rename', path, 'this store does not rename files')
      await this.#root.refuse([from, to], 'rename', { signal, lookup: () => this.rootTarget(signal), translate: (err) => this.#translate(err, 'rename', '/') })
      const request = { expected, overwrite: overwrite ?? false, signal }
      const [source, destination] = await beforeChange(this.prepareRename(from, to, request), signal, 'rename', path)
      if (source.targetKey === destination.targetKey) return untilAborted(this.renameInPlace(source, request), signal, 'rename')
      if (this.contains(source, destination)) throw FsError.unsupported('rename', path, `cannot move a directory into itself ("${to.displayPath}")`)
      return untilAborted(this.renameTarget(source, destination, request), signal, 'rename')
    })
  }

  /**
   * Creates a directory, and its missing parents. Needs `capabilities.createDirectory` (else `FS_UNSUPPORTED`).
   * - an existing directory is success with `created: false`, and nothing changes (idempotent);
   * - a file (or other non-directory) at the path or on the way is `FS_NOT_DIRECTORY`;
   * - afterwards `stat` says `directory`, its listing is empty, and the parent lists it, also where the store
   *   has no directories of its own (`createDirectory: 'marker'`), until it is removed.
   */
  async createDirectory(target: FsTarget, opts: SignalOptions = {}): Promise<FsCreateDirectoryOutcome> {
    const { signal } = opts ?? {}
    assertTarget(target, 'create directory')
    const path = target.displayPath
    return this.#run('create directory', path, signal, async () => {
      this.#refuseReadOnly('create directory', path)
      if (this.capabilities.createDirectory === undefined) throw FsError.unsupported('create directory', path, 'this store does not create directories')
      return { created: await untilAborted(this.makeDirectory(target, signal), signal, 'create directory') }
    })
  }

  /**
   * Releases connections and handles. A no-op where there are none. The backend's own (issue 32
   * adds these rules to SPEC's "idempotent"):
   * - a second `close()` resolves, at once;
   * - after `close()`, each operation works (a store with nothing to release) or fails with an `FsError`
   *   (`FS_IO_ERROR` where the connection is gone), and none hangs.
   */
  async close(): Promise<void> {}

  /** Abort check, body, error translation: the shape of every mutation that is not on a hot path. */
  async #run<T>(verb: FsVerb, path: string, signal: AbortSignal | undefined, body: () => Promise<T>): Promise<T> {
    throwIfAborted(signal, verb, path)
    try {
      return await body()
    } catch (err) {
      throw this.#translate(err, verb, path)
    }
  }

  /** A store that does not write (`capabilities.readOnly`) refuses every mutation here, before any I/O. */
  #refuseReadOnly(verb: FsVerb, path: string): void {
    if (this.capabilities.readOnly === true) throw FsError.readOnly(verb, path)
  }

  /** A failure of `stat`/`lstat`: absence (`FS_NOT_FOUND`, once translated) is `undefined`; anything else is thrown. */
  #absent(err: unknown, verb: FsVerb, path: string): undefined {
    const error = this.#translate(err, verb, path)
    if (error.code === 'FS_NOT_FOUND') return undefined
    throw error
  }

  #translate(err: unknown, verb: FsVerb, path: string): FsError {
    return translateError(err, verb, path, (e) => this.errorRow(e))
  }
}

/** An open that answered after its call was abandoned: what it opened is released. */
function releaseLate(late: OpenedFile): void {
  void releaseChunks(late.chunks)
}

/**
 * `bytes` in an array of its own: as they are when they are a `Uint8Array` whose (unshared) `buffer`
 * holds them alone, else a copy of their bytes (a `Buffer` stays a `Buffer`, never taken from the
 * shared pool), so the caller sees no other bytes and shares no memory.
 */
function ownArray(bytes: Uint8Array): Uint8Array {
  const view = bytes as ArrayBufferView
  const alone = view.byteOffset === 0 && view.buffer.byteLength === view.byteLength && !(view.buffer instanceof SharedArrayBuffer)
  if (alone && view instanceof Uint8Array) return view
  // The bytes, whatever view a store answered with (a wider typed array, a DataView): never its elements.
  const source = new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
  const own = Buffer.isBuffer(view) ? Buffer.alloc(source.length) : new Uint8Array(source.length)
  own.set(source)
  return own
}
