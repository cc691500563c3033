import { abortableChunks, untilAborted } from './abort-wait.js'
import { Buffer, constants as bufferConstants } from 'node:buffer'
import { FsError, throwIfAborted, type FsVerb } from './errors.js'
import { assertEditRequests, editSteps, editTuning, runEditFor, runEditSliced, type ByteEditResult, type EditSteps } from './edit.js'
import { sortByName } from './order.js'
import { assertCwdText, assertEditGuard, assertOverwrite, assertPathText, assertTarget, assertWriteIntent } from './paths.js'
import { decodeText, decodeTextOrNull, decodeTextStream, encodeWriteContent, normalizeLf } from './text.js'
import { translateError, type ErrorRow } from './translate.js'
import type {
  EditOptions,
  FsBytesWriteOutcome,
  FsCapabilities,
  FsCreateDirectoryOutcome,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsPathInfo,
  FsRemoveOutcome,
  FsRenameOutcome,
  FsTarget,
  FsVersion,
  FsWriteIntent,
  FsWriteOutcome,
  ReadBytesOptions,
  RemoveOptions,
  RenameOptions,
  ResolveOptions,
  SignalOptions,
  WriteOptions,
} from './types.js'

/** The default of {@link FsLimits.maxTextBytes}: 256 MiB. */
export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024
/** The default of {@link FsLimits.maxRemoveEntries}: 10,000. */
export const MAX_REMOVE_ENTRIES = 10_000
/** The default of {@link FsLimits.diffBasisMaxBytes}: 10 MiB. */
export const DEFAULT_DIFF_BASIS_MAX_BYTES = 10 * 1024 * 1024

/**
 * The most bytes whose text can be one JavaScript string: a UTF-8 byte yields
 * at most one UTF-16 unit, so a file of at most this many bytes always fits.
 */
const STRING_CEILING_BYTES = bufferConstants.MAX_STRING_LENGTH

/** Size limits every backend takes in its options; core enforces them. */
export interface FsLimits {
  /**
   * The largest file `readText` and `editText` hold as one string, in bytes
   * (default 256 MiB). Never above what one JavaScript string can hold
   * (`buffer.constants.MAX_STRING_LENGTH`), whatever is configured.
   */
  readonly maxTextBytes?: number | undefined
  /** The largest previous content decoded into a write outcome's `before` (default 10 MiB; 0 turns it off; capped like `maxTextBytes`). */
  readonly diffBasisMaxBytes?: number | undefined
  /** The most entries a recursive `remove` takes down (default 10,000); a larger tree is refused before anything is removed. */
  readonly maxRemoveEntries?: number | undefined
}

/** The chunks `openBytes` returns: an async iterable, or a plain one where the bytes are at hand. */
export type ByteChunks = AsyncIterable<Uint8Array> | Iterable<Uint8Array>

/**
 * What a hook answers: its value, or a promise of it. A backend whose store is at hand (memory)
 * answers synchronously and spares every call a turn of the event loop; core awaits either.
 * A hook that fails may throw or reject: core treats both alike.
 */
export type Awaitable<T> = T | Promise<T>

/** What {@link FileSystem.loadBytes} is asked for. */
export interface ReadRequest {
  readonly signal: AbortSignal | undefined
  /** A file larger than this is `FsError.tooLarge`, refused before its bytes are read. */
  readonly maxBytes: number
  /**
   * True when core only decodes the bytes and drops them (`readText`): they never reach a caller,
   * so a backend may return a copy in Node's shared `Buffer` pool (a view of a larger
   * `ArrayBuffer`). False or absent (`readBytes`): the bytes are handed to the caller and must be
   * an array of their own. Either way they are a copy: the store's own buffer is never returned.
   */
  readonly transient?: boolean | undefined
}

/** What {@link FileSystem.publishBytes} is asked for. */
export interface WriteRequest {
  readonly expected: FsWriteIntent | undefined
  readonly signal: AbortSignal | undefined
  /**
   * Return the previous bytes only when there are at most this many (else `null`). 0 (`writeBytes`, or
   * `writeText` with `before: false`) means nobody wants them: do not fetch the previous content at all.
   */
  readonly beforeMaxBytes: number
}

/** What {@link FileSystem.publishBytes} reports; core turns it into the {@link FsWriteOutcome}. */
export interface WriteResult {
  /** True when no file was there before. */
  readonly created: boolean
  /** The version the write left. */
  readonly version: FsVersion
  /** The previous bytes (the diff basis), or `null` when none, unknown or above `beforeMaxBytes`. */
  readonly before: Uint8Array | null
}

/** What {@link FileSystem.updateBytes} is asked for. */
export interface UpdateRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly signal: AbortSignal | undefined
  /** A file larger than this is `FsError.tooLarge`, refused before its bytes are read. */
  readonly maxBytes: number
}

/** What {@link FileSystem.removeTarget} is asked for. */
export interface RemoveRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly recursive: boolean
  readonly signal: AbortSignal | undefined
  /** A recursive remove of a tree with more entries than this is `FS_TOO_LARGE`, before anything is removed. */
  readonly maxEntries: number
}

/** What {@link FileSystem.renameTarget} is asked for. */
export interface RenameRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly overwrite: boolean | { readonly version: FsVersion }
  readonly signal: AbortSignal | undefined
}

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
 * with the named constructors (`FsError.notFound(verb, path)`…).
 *
 * A hook answers with its value or a promise of it ({@link Awaitable}; issue 21):
 * a store at hand answers synchronously, and may throw synchronously; core
 * treats a throw like a rejection. The bytes handed to `publishBytes`, and the
 * array `updateBytes`' `transform` returns, are the hook's to keep (nothing
 * changes them afterwards) and may be views into Node's `Buffer` pool: read
 * them through their `byteOffset` and `byteLength`, never their whole `buffer`.
 *
 * Rules common to every method:
 * - every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes;
 * - an aborted `signal` fails with `FS_ABORTED` and changes nothing, unless flagged `indeterminate`;
 *   the abort is honoured at once, also while the store has not answered (issue 30, which changes
 *   SPEC's "a mutation whose publication has begun completes instead"): a read fails at the abort,
 *   a mutation's hook gets `ABORT_GRACE_MS` (20 ms) to answer by itself, then the call fails flagged
 *   `indeterminate` (it may still land), and the hook's late answer is consumed and dropped;
 * - a mutation that fails without `indeterminate` did not happen; one flagged `indeterminate` (its
 *   answer was lost: a connection died with it in flight, or the abort above) may have.
 *
 * Network failures are `FS_IO_ERROR` with `retryable: true`. The kit cannot cut a
 * connection, so each remote backend proves this in its own fault tests (a proxy on
 * 127.0.0.1 that drops the connection mid-transfer).
 */
export abstract class FileSystem {
  /** What this backend can do; declared once, read by the kit and the tools. */
  abstract readonly capabilities: FsCapabilities
  /** The largest file `readText`/`editText` hold as one string (see {@link FsLimits}). */
  readonly maxTextBytes: number
  /** The largest previous content a write outcome's `before` decodes (see {@link FsLimits}). */
  readonly diffBasisMaxBytes: number
  /** The most entries a recursive `remove` takes down (see {@link FsLimits}). */
  readonly maxRemoveEntries: number

  constructor(limits: Readonly<FsLimits> = {}) {
    this.maxTextBytes = Math.min(limitOption(limits.maxTextBytes, DEFAULT_MAX_TEXT_BYTES, 'maxTextBytes'), STRING_CEILING_BYTES)
    this.diffBasisMaxBytes = Math.min(limitOption(limits.diffBasisMaxBytes, DEFAULT_DIFF_BASIS_MAX_BYTES, 'diffBasisMaxBytes'), STRING_CEILING_BYTES)
    this.maxRemoveEntries = limitOption(limits.maxRemoveEntries, MAX_REMOVE_ENTRIES, 'maxRemoveEntries')
  }

  /**
   * Resolves a path into a stable target.
   * - a blank path, a NUL byte or a lone surrogate is `FS_NOT_FOUND`; a NUL or a lone surrogate in `cwd` too;
   * - a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both;
   * - a relative `opts.cwd` is itself resolved against the backend's cwd;
   * - aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`;
   * - a missing path resolves (it may be created), with the same key before and after creation;
   * - a path through a regular file is `FS_NOT_FOUND`;
   * - `resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it).
   */
  async resolve(path: string, opts?: ResolveOptions): Promise<FsTarget> {
    const cwd = opts?.cwd
    const signal = opts?.signal
    throwIfAborted(signal, 'resolve')
    let target: FsTarget
    try {
      assertPathText(path, 'resolve')
      assertCwdText(cwd, path, 'resolve')
      target = await untilAborted(this.resolvePath(path, cwd, signal), signal, 'resolve')
    } catch (err) {
      throw this.#translate(err, 'resolve', String(path))
    }
    throwIfAborted(signal, 'resolve')
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
    throwIfAborted(signal, 'stat')
    let info: FsInfo | undefined
    try {
      info = await untilAborted(this.statTarget(target, signal), signal, 'stat')
    } catch (err) {
      info = this.#absent(err, 'stat', target.displayPath)
    }
    throwIfAborted(signal, 'stat')
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
    throwIfAborted(signal, 'lstat')
    let info: FsPathInfo | undefined
    try {
      info = await untilAborted(this.lstatPath(path, cwd, signal), signal, 'lstat')
    } catch (err) {
      info = this.#absent(err, 'lstat', path)
    }
    throwIfAborted(signal, 'lstat')
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
    throwIfAborted(signal, 'read')
    let text: string
    try {
      const maxBytes = this.maxTextBytes
      const bytes = await untilAborted(this.loadBytes(target, { signal, maxBytes, transient: true }), signal, 'read')
      if (bytes.length > maxBytes) throw FsError.tooLarge('read', path, bytes.length, maxBytes)
      text = decodeText(bytes, path, 'read')
    } catch (err) {
      throw this.#translate(err, 'read', path)
    }
    throwIfAborted(signal, 'read')
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
    throwIfAborted(signal, 'read')
    let source: ByteChunks
    try {
      source = await untilAborted(this.openBytes(target, signal), signal, 'read', (late) => void release(late))
    } catch (err) {
      throw this.#translate(err, 'read', target.displayPath)
    }
    if (signal?.aborted === true) {
      // Aborted while opening: release what the backend opened before reporting it.
      await release(source)
      throw FsError.aborted('read', signal.reason)
    }
    return this.#decodeStream(source, target.displayPath, signal)
  }

  /**
   * The direct children of a directory, metadata only.
   * - missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`;
   * - entries are sorted by the Unicode code points of their names;
   * - a symlink's type is its target's; a broken one is `other` without metadata;
   * - no file content is read; staging residue of in-flight writes is never listed.
   */
  async listDir(target: FsTarget, opts?: SignalOptions): Promise<FsDirEntry[]> {
    const signal = opts?.signal
    assertTarget(target, 'list')
    throwIfAborted(signal, 'list')
    let entries: FsDirEntry[]
    try {
      entries = sortByName(await untilAborted(this.listEntries(target, signal), signal, 'list'))
    } catch (err) {
      throw this.#translate(err, 'list', target.displayPath)
    }
    throwIfAborted(signal, 'list')
    return entries
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
   * - `before: false` (issue 18) makes the outcome's `before` `null` and asks the backend not to fetch the previous content
   *   (`beforeMaxBytes` 0); every other rule holds as without it; a `before` that is not a boolean is `FS_UNSUPPORTED` before any I/O.
   */
  async writeText(target: FsTarget, content: string, opts?: WriteOptions): Promise<FsWriteOutcome> {
    const expected = opts?.expected
    const signal = opts?.signal
    const wanted = opts?.before
    assertTarget(target, 'write')
    const path = target.displayPath
    throwIfAborted(signal, 'write')
    try {
      assertWriteIntent(expected, path)
      if (wanted !== undefined && typeof wanted !== 'boolean') throw FsError.unsupported('write', path, 'before must be a boolean')
      const bytes = encodeWriteContent(content, path, this.maxTextBytes)
      const beforeMaxBytes = wanted === false ? 0 : this.diffBasisMaxBytes
      const result = await untilAborted(this.publishBytes(target, bytes, { expected, signal, beforeMaxBytes }), signal, 'write')
      const previous = wanted === false || result.before === null || result.before.length > beforeMaxBytes ? null : decodeTextOrNull(result.before)
      return {
        operation: result.created ? 'create' : 'update',
        version: result.version,
        before: previous === null ? null : normalizeLf(previous),
        // What a read returns next: a leading U+FEFF is stored, and read back as the BOM it is.
        after: normalizeLf(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content),
      }
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
    throwIfAborted(signal, 'edit')
    try {
      assertEditRequests(edit)
      assertEditGuard(expected, path)
      const maxBytes = this.maxTextBytes
      const run: EditRun = { done: undefined, pending: undefined, prepared: undefined }
      for (let attempt = 1; ; attempt++) {
        let version: FsVersion
        try {
          version = await untilAborted(
            this.updateBytes(target, { expected, signal, maxBytes }, (bytes) => editTransform(run, bytes, edit, path, maxBytes)),
            signal,
            'edit',
          )
        } catch (err) {
          const pending = run.pending
          if (pending === undefined) throw err
          // The edit outgrew its synchronous budget: finish it outside the critical section, then publish it
          // if the file still holds the bytes it was computed from.
          if (attempt === MAX_EDIT_ATTEMPTS) {
            throw FsError.at('FS_STALE_VERSION', 'edit', path, 'file kept changing while a large edit was being computed', { retryable: true })
          }
          run.pending = undefined
          run.prepared = {
            input: pending.input,
            result: await editText(() => runEditSliced(pending.steps, signal, 'edit', true), path, pending.input.length, maxBytes),
          }
          continue
        }
        const done = run.done
        if (done === undefined) throw FsError.io('edit', path, 'the backend published without applying the edit')
        return editOutcome(version, done)
      }
    } catch (err) {
      throw this.#translate(err, 'edit', path)
    }
  }

  /**
   * The whole file as bytes, exactly as stored (no decoding, no BOM handling).
   * - missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`;
   * - a file above `maxBytes` (default and ceiling `maxTextBytes`) is `FS_TOO_LARGE`, refused before its content is read;
   * - `maxBytes` that is not a non-negative integer is `FS_UNSUPPORTED` before any I/O;
   * - the bytes are the caller's: changing them changes nothing stored.
   */
  async readBytes(target: FsTarget, opts?: ReadBytesOptions): Promise<Uint8Array> {
    const signal = opts?.signal
    const asked = opts?.maxBytes
    assertTarget(target, 'read')
    const path = target.displayPath
    throwIfAborted(signal, 'read')
    let bytes: Uint8Array
    try {
      if (asked !== undefined && (!Number.isSafeInteger(asked) || asked < 0)) {
        throw FsError.unsupported('read', path, 'maxBytes must be a non-negative integer')
      }
      const maxBytes = Math.min(asked ?? this.maxTextBytes, this.maxTextBytes)
      bytes = await untilAborted(this.loadBytes(target, { signal, maxBytes, transient: false }), signal, 'read')
      if (bytes.length > maxBytes) throw FsError.tooLarge('read', path, bytes.length, maxBytes)
    } catch (err) {
      throw this.#translate(err, 'read', path)
    }
    throwIfAborted(signal, 'read')
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
    throwIfAborted(signal, 'write')
    try {
      assertWriteIntent(expected, path)
      if (owned === undefined) throw FsError.unsupported('write', path, 'content must be a Uint8Array')
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
   * - after a remove, `stat` is `undefined` and the parent's listing no longer shows the name; the outcome counts the entries removed.
   */
  async remove(target: FsTarget, opts: RemoveOptions = {}): Promise<FsRemoveOutcome> {
    const { expected, recursive, signal } = opts ?? {}
    assertTarget(target, 'remove')
    const path = target.displayPath
    return this.#run('remove', path, signal, async () => {
      assertEditGuard(expected, path, 'remove')
      if (recursive !== undefined && typeof recursive !== 'boolean') throw FsError.unsupported('remove', path, 'recursive must be a boolean')
      if (this.capabilities.remove !== true) throw FsError.unsupported('remove', path, 'this store does not remove files')
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
   * - `from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version;
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
      if (this.capabilities.rename === undefined) throw FsError.unsupported('rename', path, 'this store does not rename files')
      if (from.targetKey === to.targetKey) return this.#renameOntoItself(from, expected, signal)
      if (this.contains(from, to)) throw FsError.unsupported('rename', path, `cannot move a directory into itself ("${to.displayPath}")`)
      return untilAborted(this.renameTarget(from, to, { expected, overwrite: overwrite ?? false, signal }), signal, 'rename')
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
      if (this.capabilities.createDirectory === undefined) throw FsError.unsupported('create directory', path, 'this store does not create directories')
      return { created: await untilAborted(this.makeDirectory(target, signal), signal, 'create directory') }
    })
  }

  /** Releases connections and handles. A no-op where there are none; idempotent. */
  async close(): Promise<void> {}

  // ---- hooks: what a backend implements; input is already valid ----

  /** `resolve` with valid path text and `cwd`; must honour every rule of `resolve` but the text checks. */
  protected abstract resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget>

  /** `stat`; absence may be `undefined` or any `FS_NOT_FOUND` (core returns `undefined` for both). */
  protected abstract statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined>

  /** `lstat` with valid path text and `cwd`; absence may be `undefined` or any `FS_NOT_FOUND`. */
  protected abstract lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined>

  /**
   * The bytes of a regular file: missing is `FsError.notFound`, a non-file `FsError.notRegularFile`;
   * a file larger than `maxBytes` is `FsError.tooLarge`, refused before its content is read.
   */
  protected abstract loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array>

  /**
   * The bytes of a regular file as chunks. The open-time checks (missing, non-file, unreadable)
   * reject the promise; later failures are thrown by the iterator. A chunk may be reused by the
   * backend once the next one is asked for (core decodes each before asking). `return()` on the
   * iterator must release the file.
   */
  protected abstract openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks>

  /** The entries of a directory, in any order (core sorts): missing is `notFound`, a non-directory `notDirectory`. */
  protected abstract listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]>

  /**
   * Publishes `bytes` atomically under `request.expected` (a known guard kind; see `checkGuard`
   * for process-enforced guards); creates missing parents; a directory or special file is
   * `FsError.notRegularFile`.
   */
  protected abstract publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult>

  /**
   * One critical section: find the file (missing → `FsError.stale(verb, path, 'gone')`, a non-file
   * → `notRegularFile`), check `request.expected` BEFORE reading (`checkGuard`), refuse a file above
   * `maxBytes` (`FsError.tooLarge`), call `transform` on its bytes and publish what it returns
   * atomically, keeping the file's mode. Returns the version published. `transform` may throw
   * (nothing must be published then) and may be called again if the backend retries. Neither the
   * bytes given to `transform` nor the array it returns may change afterwards: the outcome's
   * `before`/`after` are decoded from them when first read (give `transform` a copy if the store
   * reuses that buffer in place).
   */
  protected abstract updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion>

  /**
   * `remove` (called only where `capabilities.remove`): find the target (missing → `notFound`, or
   * `stale(…, 'gone')` under a guard); check `expected` inside the critical section; a directory
   * with entries is `FsError.notEmpty` unless `recursive`; a recursive remove counts the tree first
   * (above `maxEntries` → `FS_TOO_LARGE`, nothing removed) and never follows a link.
   */
  protected removeTarget(target: FsTarget, _request: RemoveRequest): Awaitable<FsRemoveOutcome> {
    return Promise.reject(FsError.unsupported('remove', target.displayPath, 'this store does not remove files'))
  }

  /**
   * `rename` (called only where `capabilities.rename`, with two different targets, `to` not inside
   * `from`): every rule of `rename`, guards checked inside the critical section, never a moment
   * where neither name holds the content.
   */
  protected renameTarget(from: FsTarget, _to: FsTarget, _request: RenameRequest): Awaitable<FsRenameOutcome> {
    return Promise.reject(FsError.unsupported('rename', from.displayPath, 'this store does not rename files'))
  }

  /** `createDirectory` (called only where `capabilities.createDirectory`): true when it created the directory. */
  protected makeDirectory(target: FsTarget, _signal: AbortSignal | undefined): Awaitable<boolean> {
    return Promise.reject(FsError.unsupported('create directory', target.displayPath, 'this store does not create directories'))
  }

  /** `processPath` where `capabilities.processPath` is true. */
  protected processPathOf(target: FsTarget): string {
    throw FsError.unsupported('resolve', target.displayPath, 'this store has no path a local process can open')
  }

  /**
   * The backend's one error table: the row for a foreign error (errno, SFTP status, HTTP
   * status…), or `undefined` (then it is `FS_IO_ERROR` with the foreign message). Never by
   * message text.
   */
  protected errorRow(_err: unknown): ErrorRow | undefined {
    return undefined
  }

  /** The hooks of another filesystem, for layers (`FileSystemLayer`) that forward to it. */
  protected static hooksOf(fs: FileSystem): FileSystemHooks {
    return {
      resolvePath: (path, cwd, signal) => fs.resolvePath(path, cwd, signal),
      statTarget: (target, signal) => fs.statTarget(target, signal),
      lstatPath: (path, cwd, signal) => fs.lstatPath(path, cwd, signal),
      loadBytes: (target, request) => fs.loadBytes(target, request),
      openBytes: (target, signal) => fs.openBytes(target, signal),
      listEntries: (target, signal) => fs.listEntries(target, signal),
      publishBytes: (target, bytes, request) => fs.publishBytes(target, bytes, request),
      updateBytes: (target, request, transform) => fs.updateBytes(target, request, transform),
      removeTarget: (target, request) => fs.removeTarget(target, request),
      renameTarget: (from, to, request) => fs.renameTarget(from, to, request),
      makeDirectory: (target, signal) => fs.makeDirectory(target, signal),
      errorRow: (err) => fs.errorRow(err),
    }
  }

  /** Abort check, body, error translation: the shape of every mutation that is not on a hot path. */
  async #run<T>(verb: FsVerb, path: string, signal: AbortSignal | undefined, body: () => Promise<T>): Promise<T> {
    throwIfAborted(signal, verb)
    try {
      return await body()
    } catch (err) {
      throw this.#translate(err, verb, path)
    }
  }

  /** A failure of `stat`/`lstat`: absence (`FS_NOT_FOUND`, once translated) is `undefined`; anything else is thrown. */
  #absent(err: unknown, verb: FsVerb, path: string): undefined {
    const error = this.#translate(err, verb, path)
    if (error.code === 'FS_NOT_FOUND') return undefined
    throw error
  }

  /** `rename(a, a)`: nothing moves; the source must exist (at the expected version). */
  async #renameOntoItself(target: FsTarget, expected: { readonly version: FsVersion } | undefined, signal: AbortSignal | undefined): Promise<FsRenameOutcome> {
    let info: FsInfo | undefined
    try {
      info = await untilAborted(this.statTarget(target, signal), signal, 'stat')
    } catch (err) {
      info = this.#absent(err, 'rename', target.displayPath)
    }
    if (info === undefined) throw expected === undefined ? FsError.notFound('rename', target.displayPath) : FsError.stale('rename', target.displayPath, 'gone')
    if (info.type === 'other') throw FsError.notRegularFile('rename', target.displayPath)
    if (expected !== undefined && info.version !== expected.version) throw FsError.stale('rename', target.displayPath, 'changed')
    return { type: info.type, replaced: false, version: info.version }
  }

  #translate(err: unknown, verb: FsVerb, path: string): FsError {
    return translateError(err, verb, path, (e) => this.errorRow(e))
  }

  async *#decodeStream(source: ByteChunks, path: string, signal: AbortSignal | undefined): AsyncGenerator<string> {
    try {
      yield* decodeTextStream(abortableChunks(source, signal, 'read'), path, signal)
    } catch (err) {
      throw this.#translate(err, 'read', path)
    }
  }
}

/** The protected hooks of a filesystem as plain functions (see `FileSystem.hooksOf`). */
export interface FileSystemHooks {
  resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget>
  statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined>
  lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined>
  loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array>
  openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks>
  listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]>
  publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult>
  updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion>
  removeTarget(target: FsTarget, request: RemoveRequest): Awaitable<FsRemoveOutcome>
  renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome>
  makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Awaitable<boolean>
  errorRow(err: unknown): ErrorRow | undefined
}

async function release(source: ByteChunks): Promise<void> {
  try {
    const chunks = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    await chunks.return?.()
  } catch {
    // nothing to report: the caller gets FS_ABORTED
  }
}

/**
 * Up to this many bytes before and after, an edit's outcome carries its two texts as plain
 * strings: building them costs less than the accessors that would defer them.
 */
const EAGER_OUTCOME_BYTES = 16 * 1024

/**
 * The outcome of an edit: plain data for a small file; above {@link EAGER_OUTCOME_BYTES} the
 * strings are built when first read, through enumerable accessors, so that every reader
 * (spread, `JSON.stringify`, `Object.keys`) still sees `before` and `after`.
 */
function editOutcome(version: FsVersion, done: ByteEditResult): FsEditOutcome {
  if (done.bytes.length <= EAGER_OUTCOME_BYTES && done.inputLength <= EAGER_OUTCOME_BYTES) return { version, before: done.before, after: done.after }
  return {
    version,
    get before() {
      return done.before
    },
    get after() {
      return done.after
    },
  }
}

/** How many times an edit computed outside the critical section is tried before the file, changing meanwhile, is reported stale. */
const MAX_EDIT_ATTEMPTS = 3

/** The state of one `editText` call across its `updateBytes` calls. */
interface EditRun {
  /** What the last transform returned. */
  done: ByteEditResult | undefined
  /** The steps of an edit that ran out of its synchronous budget, and the bytes they work on. */
  pending: { readonly input: Uint8Array; readonly steps: EditSteps } | undefined
  /** An edit finished outside the critical section, and the bytes it was computed from. */
  prepared: { readonly input: Uint8Array; readonly result: ByteEditResult } | undefined
}

/**
 * `editText`'s `transform`: the edit of `bytes`, run synchronously for at most `editTuning.sync`
 * (25 ms). A result prepared from these very bytes is published as it is. An edit
 * that needs longer leaves its steps in `run.pending` and throws, so the backend publishes nothing;
 * `editText` finishes it giving the event loop turns, then calls `updateBytes` again.
 */
function editTransform(run: EditRun, bytes: Uint8Array, edit: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes: number): Uint8Array {
  run.done = undefined
  run.pending = undefined
  if (bytes.length > maxBytes) throw FsError.tooLarge('edit', path, bytes.length, maxBytes)
  const prepared = run.prepared
  if (prepared !== undefined && sameBytes(prepared.input, bytes)) return (run.done = prepared.result).bytes
  const steps = editSteps(bytes, edit, path, maxBytes)
  const finished = editTextSync(() => runEditFor(steps, editTuning.sync), path, bytes.length, maxBytes)
  if (finished === undefined) {
    run.pending = { input: bytes, steps }
    throw FsError.io('edit', path, 'the edit is being finished outside the critical section')
  }
  return (run.done = finished.value).bytes
}

/** True when `a` and `b` hold the same bytes (a native compare: tens of GB/s). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a === b || (a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b))
}

/** A string or buffer that outgrows what V8 can hold is `FS_TOO_LARGE`, not a crash (`size`: the bytes edited). */
function tooLargeFrom(err: unknown, path: string, size: number, maxBytes: number): unknown {
  if (!(err instanceof RangeError)) return err
  return FsError.at('FS_TOO_LARGE', 'edit', path, 'the edited text is too large to hold as one string', { cause: err, details: { size, limit: maxBytes } })
}

function editTextSync<T>(body: () => T, path: string, size: number, maxBytes: number): T {
  try {
    return body()
  } catch (err) {
    throw tooLargeFrom(err, path, size, maxBytes)
  }
}

async function editText<T>(body: () => Promise<T>, path: string, size: number, maxBytes: number): Promise<T> {
  try {
    return await body()
  } catch (err) {
    throw tooLargeFrom(err, path, size, maxBytes)
  }
}

function limitOption(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`)
  return value
}
