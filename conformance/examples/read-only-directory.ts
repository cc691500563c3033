/**
 * A worked example of a store that does not write: a read-only view of a directory on this
 * machine's disk (an export, a checked-out snapshot, an unpacked archive). It declares
 * `capabilities.readOnly`, so core refuses every mutation with `FS_PERMISSION_DENIED` before any
 * hook runs, and the kit runs its read-only profile: fixtures are made through the external hooks
 * (`read-only-directory.test.ts`), never through the subject. Only the read hooks are real.
 *
 * Paths are the view's own: `/` is the directory given. Symbolic links are not followed (the view
 * declares `symlinks: false`): a link inside shows as `other`, and a path through one is not found.
 * It is an example, not a fence: a process that swaps a directory for a link between `resolve` and a
 * read could lead the read outside (a final link is never followed); for an untrusted tree, use
 * `LocalFileSystem` under a `SandboxedFileSystem`.
 */
import { constants, createReadStream, realpathSync, type BigIntStats } from 'node:fs'
import { lstat, open, readdir } from 'node:fs/promises'
import { posix } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  errorCodeOf,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  type ByteChunks,
  type ErrorRow,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsLimits,
  type FsPathInfo,
  type FsTarget,
  type ReadRequest,
  type WriteResult,
} from '@seamfs/core/backend'

const ERRORS: Readonly<Record<string, ErrorRow>> = {
  ENOENT: { code: 'FS_NOT_FOUND', reason: 'not found' },
  ENOTDIR: { code: 'FS_NOT_FOUND', reason: 'a parent path segment is not a directory' },
  EACCES: { code: 'FS_PERMISSION_DENIED', reason: 'permission denied' },
  EISDIR: { code: 'FS_NOT_REGULAR_FILE', reason: 'not a regular file' },
  EMFILE: { code: 'FS_IO_ERROR', reason: 'too many open files', retryable: true },
}

/** What a view path holds: `undefined` when nothing is there. */
async function statOf(real: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(real, { bigint: true })
  } catch (err) {
    if (errorCodeOf(err) === 'ENOENT' || errorCodeOf(err) === 'ENOTDIR') return undefined
    throw err
  }
}

/** A version from what `lstat` says: it changes with the content (nanosecond times, the change time, the inode). */
function versionOf(st: BigIntStats): FsVersion {
  return FsVersion(`${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`)
}

function infoOf(st: BigIntStats): FsInfo {
  const version = versionOf(st)
  if (st.isFile()) return { type: 'file', version, size: Number(st.size) }
  return { type: st.isDirectory() ? 'directory' : 'other', version }
}

export interface ReadOnlyDirectoryOptions extends FsLimits {
  /** The directory the view shows as `/`. */
  readonly dir: string
}

export class ReadOnlyDirectoryFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = Object.freeze({
    symlinks: false,
    permissions: false,
    processPath: false,
    // Never used: nothing is written. The weakest strength says so.
    createIfAbsent: 'process',
    replaceIfVersion: 'process',
    versionSource: 'stat',
    newlineInNames: true,
    emptyDirectories: true,
    readOnly: true,
  })
  readonly #dir: string

  constructor(options: ReadOnlyDirectoryOptions) {
    super(options)
    this.#dir = realpathSync(options.dir)
  }

  override fileUrl(target: FsTarget): string {
    return pathToFileURL(this.#real(target.targetKey)).href
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    const p = parent.targetKey
    return child.targetKey === p || child.targetKey.startsWith(p === '/' ? '/' : `${p}/`)
  }

  /** Folds `.` and `..` lexically (no link is followed), then refuses a path through a file. */
  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const key = posix.resolve('/', cwd ?? '/', path)
    const parts = key.split('/').filter((part) => part !== '')
    for (let i = 1; i < parts.length; i++) {
      const st = await statOf(this.#real(`/${parts.slice(0, i).join('/')}`))
      if (st === undefined) break
      if (!st.isDirectory()) throw FsError.throughFile('resolve', path)
    }
    return { targetKey: FsTargetKey(key), displayPath: key }
  }

  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const st = await statOf(this.#real(target.targetKey))
    return st === undefined ? undefined : infoOf(st)
  }

  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsPathInfo | undefined> {
    const target = await this.resolvePath(path, cwd)
    const st = await statOf(this.#real(target.targetKey))
    if (st === undefined) return undefined
    return st.isSymbolicLink() ? { type: 'symlink', version: versionOf(st) } : infoOf(st)
  }

  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    const file = await this.#openFile(target)
    try {
      const size = Number((await file.stat({ bigint: true })).size)
      if (size > request.maxBytes) throw FsError.tooLarge('read', target.displayPath, size, request.maxBytes)
      return await file.readFile({ signal: request.signal })
    } finally {
      await file.close()
    }
  }

  protected override async openBytes(target: FsTarget): Promise<ByteChunks> {
    const file = await this.#openFile(target)
    // The stream owns the descriptor from here: it closes it at the end, on an error, or on `return()`.
    return createReadStream('', { fd: file, autoClose: true }) as AsyncIterable<Uint8Array>
  }

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const real = this.#real(target.targetKey)
    const st = await statOf(real)
    if (st === undefined) throw FsError.notFound('list', target.displayPath)
    if (!st.isDirectory()) throw FsError.notDirectory('list', target.displayPath)
    const names = await readdir(real)
    const entries = await Promise.all(
      names.map(async (name): Promise<FsDirEntry | undefined> => {
        const key = posix.join(target.targetKey, name)
        const child = await statOf(this.#real(key))
        if (child === undefined) return undefined // gone since the listing: not there
        const info = infoOf(child)
        return {
          name,
          type: info.type,
          target: { targetKey: FsTargetKey(key), displayPath: key },
          version: info.version,
          ...(info.size !== undefined && { size: info.size }),
        }
      }),
    )
    return entries.filter((entry) => entry !== undefined)
  }

  /** Never called: core refuses every mutation of a `readOnly` store before any hook. */
  protected override publishBytes(target: FsTarget): WriteResult {
    throw FsError.readOnly('write', target.displayPath)
  }

  /** Never called, as {@link publishBytes}. */
  protected override updateBytes(target: FsTarget): FsVersion {
    throw FsError.readOnly('edit', target.displayPath)
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    const code = errorCodeOf(err)
    return code === undefined ? undefined : ERRORS[code]
  }

  /** The regular file at `target`, opened without following a final link; its checks are the contract's. */
  async #openFile(target: FsTarget) {
    const real = this.#real(target.targetKey)
    const st = await statOf(real)
    if (st === undefined) throw FsError.notFound('read', target.displayPath)
    if (!st.isFile()) throw FsError.notRegularFile('read', target.displayPath)
    // A link put there since the check is not followed; anything else put there is refused, not read.
    const file = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW)
    if (!(await file.stat()).isFile()) {
      await file.close()
      throw FsError.notRegularFile('read', target.displayPath)
    }
    return file
  }

  #real(key: string): string {
    return key === '/' ? this.#dir : `${this.#dir}${key}`
  }
}
