import { beforeChange } from './abort-wait.js'
import { FsError } from './errors.js'
import type {
  Awaitable,
  ByteChunks,
  FileSystemHooks,
  OpenedFile,
  ReadRequest,
  RemoveRequest,
  RenameRequest,
  TreePages,
  TreeRequest,
  UpdateRequest,
  WriteRequest,
  WriteResult,
} from './hooks.js'
import { translateError, type ErrorRow } from './translate.js'
import { walkTree } from './tree.js'
import type { FsDirEntry, FsInfo, FsPathInfo, FsRemoveOutcome, FsRenameOutcome, FsTarget, FsVersion } from './types.js'

/**
 * The protected hooks of a filesystem: what a backend implements, with valid input only.
 * `FileSystem` extends it and calls them from its public methods, which do every rule that is not
 * about the store; see `FileSystem` and ARCHITECTURE.md ("The hooks"). Extend `FileSystem`, never
 * this class.
 *
 * A hook answers with its value or a promise of it ({@link Awaitable}): a store at hand answers
 * synchronously, and may throw synchronously; core treats a throw like a rejection. The bytes handed
 * to `publishBytes`, and the array `updateBytes`' `transform` returns, are the hook's to keep
 * (nothing changes them afterwards) and may be views into Node's `Buffer` pool: read them through
 * their `byteOffset` and `byteLength`, never their whole `buffer`.
 */
export abstract class FileSystemHookBase {
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

  /**
   * A regular file's metadata and its chunks, for `openFile`: missing is `FsError.notFound`, a
   * non-file `FsError.notRegularFile`; `info` is what `statTarget` would say of the bytes the chunks
   * yield (never a version of newer content), and the chunks follow `openBytes`' rules (`return()`
   * on the iterator releases the file). Override it where the store answers both in one look (a
   * GET's headers and body, a descriptor's fstat and reads); the default asks `statTarget`, then
   * `openBytes`: two looks, the version from the first, so a change between them only makes a guard
   * built on it stale.
   */
  protected openTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<OpenedFile> {
    return this.#openByStat(target, signal)
  }

  async #openByStat(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const info = await this.statTarget(target, signal)
    if (info === undefined) throw FsError.notFound('read', target.displayPath)
    if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
    return { info, chunks: await this.openBytes(target, signal) }
  }

  /** The entries of a directory, in any order (core sorts): missing is `notFound`, a non-directory `notDirectory`. */
  protected abstract listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]>

  /**
   * `listTree`: every entry below the directory `target`, a page at a time, each once, with its
   * `path` below `target` (see `FileSystem.listTree`). Missing is `notFound` and a non-directory
   * `notDirectory`, both before the first page; a directory named in `request.prune` is listed and
   * never entered, a symlink to a directory listed with `link: true` and never entered. The default
   * walks the directories through `listEntries`, looking at each directory entry with `lstatPath`;
   * override it where the store lists a subtree at once (S3's prefix listing: a request per page
   * whatever the depth) and declare `capabilities.listTree: 'native'`.
   */
  protected listSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages> {
    return walkTree(target, request, {
      listEntries: (dir, signal) => this.listEntries(dir, signal),
      lstatPath: (path, cwd, signal) => this.lstatPath(path, cwd, signal),
      errorRow: (err) => this.errorRow(err),
    })
  }

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
   * reuses that buffer in place) — unless the bytes were lent (`lendBytes` from
   * `@seamfs/core/backend`, on the very array given): core then keeps none of them once
   * `transform` returns or throws, and the backend may overwrite them from then on (a read buffer
   * used again for the next edit, which costs no fresh buffer of the file's size). A layer between
   * (`FileSystemLayer`) hands `transform` the backend's array as it is and keeps none of it.
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

  /**
   * A layer's say on a rename before core decides what it is (a no-op onto itself, a directory into
   * itself, a move): called only where `capabilities.rename`, before any other hook of the rename.
   * Returns the two targets core decides on. The default returns them as given; a fence refuses
   * here, and returns the targets as they resolve now (a link swapped since `resolve`).
   */
  protected prepareRename(from: FsTarget, to: FsTarget, _request: RenameRequest): Awaitable<readonly [FsTarget, FsTarget]> {
    return [from, to]
  }

  /**
   * `rename(a, a)`: both names are one file (one `targetKey`), so nothing moves. Called only where
   * `capabilities.rename`. The source must exist (missing → `notFound`, or `stale(…, 'gone')` under a
   * guard), be a file or directory, and have `expected`'s version; the outcome reports its current
   * version. The default checks through `statTarget`; a layer overrides it to apply its fence.
   */
  protected renameInPlace(target: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    return this.#renameOntoItself(target, request.expected, request.signal)
  }

  /**
   * The store's root: the directory `remove` and `rename` never take away. The default is
   * `resolvePath('/')`; a backend whose root is elsewhere (a `root` scope outside of which `/` lies)
   * returns that. Asked once per instance, on the first `remove` or `rename`.
   */
  protected rootTarget(signal: AbortSignal | undefined): Awaitable<FsTarget> {
    return this.resolvePath('/', undefined, signal)
  }

  /** `createDirectory` (called only where `capabilities.createDirectory`): true when it created the directory. */
  protected makeDirectory(target: FsTarget, _signal: AbortSignal | undefined): Awaitable<boolean> {
    return Promise.reject(FsError.unsupported('create directory', target.displayPath, 'this store does not create directories'))
  }

  /**
   * Whether `publishBytes` and `updateBytes` honour a request's `fence` (see `WriteRequest.fence`):
   * begin at once, publish only once it resolved. A layer hands one only to a hook that says so, and
   * awaits it before calling any other. Default false; a remote backend that stages before it
   * publishes says true, so a fence's re-resolve shares the write's first round trip.
   */
  protected takesFence(): boolean {
    return false
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
  protected static hooksOf(fs: FileSystemHookBase): FileSystemHooks {
    return {
      resolvePath: (path, cwd, signal) => fs.resolvePath(path, cwd, signal),
      statTarget: (target, signal) => fs.statTarget(target, signal),
      lstatPath: (path, cwd, signal) => fs.lstatPath(path, cwd, signal),
      loadBytes: (target, request) => fs.loadBytes(target, request),
      openBytes: (target, signal) => fs.openBytes(target, signal),
      openTarget: (target, signal) => fs.openTarget(target, signal),
      listEntries: (target, signal) => fs.listEntries(target, signal),
      listSubtree: (target, request) => fs.listSubtree(target, request),
      publishBytes: (target, bytes, request) => fs.publishBytes(target, bytes, request),
      updateBytes: (target, request, transform) => fs.updateBytes(target, request, transform),
      removeTarget: (target, request) => fs.removeTarget(target, request),
      renameTarget: (from, to, request) => fs.renameTarget(from, to, request),
      prepareRename: (from, to, request) => fs.prepareRename(from, to, request),
      renameInPlace: (target, request) => fs.renameInPlace(target, request),
      rootTarget: (signal) => fs.rootTarget(signal),
      makeDirectory: (target, signal) => fs.makeDirectory(target, signal),
      takesFence: () => fs.takesFence(),
      errorRow: (err) => fs.errorRow(err),
    }
  }

  /** `rename(a, a)`: nothing moves; the source must exist (at the expected version). */
  async #renameOntoItself(target: FsTarget, expected: { readonly version: FsVersion } | undefined, signal: AbortSignal | undefined): Promise<FsRenameOutcome> {
    const path = target.displayPath
    let info: FsInfo | undefined
    try {
      info = await beforeChange(this.statTarget(target, signal), signal, 'rename', path)
    } catch (err) {
      const error = translateError(err, 'rename', path, (e) => this.errorRow(e))
      if (error.code !== 'FS_NOT_FOUND') throw error
    }
    if (info === undefined) throw expected === undefined ? FsError.notFound('rename', path) : FsError.stale('rename', path, 'gone')
    if (info.type === 'other') throw FsError.notRegularFile('rename', path)
    if (expected !== undefined && info.version !== expected.version) throw FsError.stale('rename', path, 'changed')
    return { type: info.type, replaced: false, version: info.version }
  }
}
