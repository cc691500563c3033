import { constants as bufferConstants } from 'node:buffer'
import { accessSync, type BigIntStats, closeSync, constants, fstatSync, lstatSync, openSync, readSync, read, statSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  assertEditRequest,
  processWide,
  assertWriteIntent,
  assertPathText,
  compareNames,
  decodeText,
  decodeTextOrNull,
  editTextBytes,
  encodeWriteContent,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  KeyedMutex,
  normalizeLf,
  TextChunkDecoder,
  throwIfAborted,
  type EditOptions,
  type FsCapabilities,
  type FsDirEntry,
  type FsEditOutcome,
  type FsEditRequest,
  type FsInfo,
  type FsPathInfo,
  type FsTarget,
  type FsVerb,
  type FsWriteOutcome,
  type ResolveOptions,
  type SignalOptions,
  type WriteOptions,
} from '@seamfs/core'
import { errnoOf, toFsError } from './errors.js'
import {
  DEFAULT_DIFF_BASIS_MAX_BYTES,
  DEFAULT_NEW_FILE_MODE,
  type LocalFileSystemOptions,
  type LocalHooks,
} from './options.js'
import { absolutePath, canonicalPath, containsPath } from './paths.js'
import { isStagingName, Publisher } from './publish.js'

/** Reads of at most this many bytes are done synchronously (microseconds from the page cache). */
const SYNC_READ_MAX = 64 * 1024
const STREAM_CHUNK = 256 * 1024
/** Opening a FIFO must not block: the type check comes from fstat after open. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK
/** Errnos of a path that can never be followed: for `stat` it is absent, in a listing a broken link. */
const UNFOLLOWABLE = new Set(['ELOOP', 'ENOTDIR', 'ENAMETOOLONG'])

const LOCAL_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  permissions: true,
  processPath: true,
  createIfAbsent: 'atomic',
  replaceIfVersion: 'process',
  versionSource: 'stat',
  newlineInNames: true,
  emptyDirectories: true,
})

function childPath(parent: string, name: string): string {
  return parent.endsWith(sep) ? parent + name : parent + sep + name
}

/** `dev:ino:size:mtimeNs:ctimeNs`: ctime catches a same-size rewrite even when mtime was restored. */
function versionOf(st: BigIntStats): FsVersion {
  return FsVersion(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`)
}

function typeOf(st: BigIntStats): 'file' | 'directory' | 'other' {
  if (st.isFile()) return 'file'
  return st.isDirectory() ? 'directory' : 'other'
}

function infoOf(st: BigIntStats): FsInfo {
  const type = typeOf(st)
  return type === 'file' ? { version: versionOf(st), type, size: Number(st.size) } : { version: versionOf(st), type }
}

function readChunk(fd: number, buffer: Buffer, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, null, (err, bytesRead) => (err === null ? resolve(bytesRead) : reject(err)))
  })
}

/** Reads an open descriptor to its end (the file may have grown since fstat). */
async function readAll(fd: number, sizeHint: number, verb: FsVerb, signal: AbortSignal | undefined): Promise<Buffer> {
  if (sizeHint >= bufferConstants.MAX_LENGTH) {
    // Node's own code for this (readFile's), mapped with the path by the caller's toFsError.
    throw Object.assign(new RangeError(`${sizeHint} bytes exceed the largest buffer`), { code: 'ERR_FS_FILE_TOO_LARGE' })
  }
  let buffer = Buffer.allocUnsafe(sizeHint + 1)
  let length = 0
  for (;;) {
    if (length === buffer.length) {
      const grown = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(grown, 0, 0, length)
      buffer = grown
    }
    const want = Math.min(buffer.length - length, 1024 * 1024)
    let n: number
    if (sizeHint <= SYNC_READ_MAX) {
      n = readSync(fd, buffer, length, want, null)
    } else {
      throwIfAborted(signal, verb)
      n = await readChunk(fd, buffer, length, want)
    }
    if (n === 0) return buffer.subarray(0, length)
    length += n
  }
}

/**
 * The host disk behind the seamfs contract. Writes are atomic and durable
 * (staging directory, fsync, rename, directory fsync); guarded creates are
 * atomic across processes (hard link); version guards are checked under a
 * per-target lock inside this process. Metadata syscalls are synchronous
 * (microseconds on a local disk); data transfer and fsync are asynchronous.
 */
export class LocalFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = LOCAL_CAPABILITIES
  readonly cwd: string
  readonly #diffBasisMaxBytes: number
  readonly #newFileMode: number
  readonly #hooks: LocalHooks | undefined
  /** Per-target locks, shared by every instance in the process: `replaceIfVersion` is `'process'`. */
  readonly #locks: KeyedMutex = processWide('backend-local:locks', () => new KeyedMutex())
  readonly #publisher = new Publisher()

  constructor(options: Readonly<LocalFileSystemOptions> = {}) {
    super()
    this.cwd = absolutePath(options.cwd ?? process.cwd(), process.cwd())
    const cap = options.diffBasisMaxBytes ?? DEFAULT_DIFF_BASIS_MAX_BYTES
    if (!Number.isSafeInteger(cap) || cap < 0) throw new RangeError('diffBasisMaxBytes must be a non-negative integer')
    const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
    this.#diffBasisMaxBytes = cap
    this.#newFileMode = mode
    this.#hooks = options.hooks
  }

  /** Removes this filesystem's idle staging directories now (they otherwise go after a second of quiet). */
  override async close(): Promise<void> {
    this.#publisher.flush()
  }

  override async resolve(path: string, opts: ResolveOptions = {}): Promise<FsTarget> {
    throwIfAborted(opts.signal, 'resolve')
    assertPathText(path, 'resolve')
    const abs = this.#absolute(path, opts.cwd)
    let key: string
    try {
      key = canonicalPath(abs)
    } catch (err) {
      // canonicalPath maps what it expects; a link changed under it (lstat, readlink) must not escape raw.
      throw toFsError(err, 'resolve', abs)
    }
    const target = { targetKey: FsTargetKey(key), displayPath: abs }
    throwIfAborted(opts.signal, 'resolve')
    return target
  }

  override processPath(target: FsTarget): string {
    return target.targetKey
  }

  override fileUrl(target: FsTarget): string {
    return pathToFileURL(target.targetKey).href
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return containsPath(parent.targetKey, child.targetKey)
  }

  override async stat(target: FsTarget, opts: SignalOptions = {}): Promise<FsInfo | undefined> {
    throwIfAborted(opts.signal, 'stat')
    try {
      const st = statSync(target.targetKey, { bigint: true, throwIfNoEntry: false })
      return st === undefined ? undefined : infoOf(st)
    } catch (err) {
      if (UNFOLLOWABLE.has(errnoOf(err) ?? '')) return undefined
      throw toFsError(err, 'stat', target.displayPath)
    }
  }

  override async lstat(path: string, opts: ResolveOptions = {}): Promise<FsPathInfo | undefined> {
    throwIfAborted(opts.signal, 'lstat')
    assertPathText(path, 'lstat')
    const abs = this.#absolute(path, opts.cwd)
    try {
      const st = lstatSync(abs, { bigint: true, throwIfNoEntry: false })
      if (st === undefined) return undefined
      if (st.isSymbolicLink()) return { version: versionOf(st), type: 'symlink' }
      return infoOf(st)
    } catch (err) {
      throw toFsError(err, 'lstat', abs)
    }
  }

  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    throwIfAborted(opts.signal, 'read')
    let fd: number | undefined
    try {
      fd = openSync(target.targetKey, READ_FLAGS)
      const st = fstatSync(fd, { bigint: true })
      this.#assertRegular(st, 'read', target)
      const bytes = await readAll(fd, Number(st.size), 'read', opts.signal)
      return decodeText(bytes, target.displayPath, 'read')
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }

  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    throwIfAborted(opts.signal, 'read')
    try {
      const st = statSync(target.targetKey, { bigint: true })
      this.#assertRegular(st, 'read', target)
      accessSync(target.targetKey, constants.R_OK)
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    }
    // The descriptor is opened on first iteration, so an iterable that is never consumed holds nothing.
    return streamFile(target, opts.signal)
  }

  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    const { signal } = opts
    throwIfAborted(signal, 'list')
    try {
      const st = statSync(target.targetKey, { throwIfNoEntry: false })
      if (st === undefined) throw new FsError('FS_NOT_FOUND', `cannot list "${target.displayPath}": not found`)
      if (!st.isDirectory()) {
        throw new FsError('FS_NOT_DIRECTORY', `cannot list "${target.displayPath}": not a directory`)
      }
      const dirents = await readdir(target.targetKey, { withFileTypes: true })
      throwIfAborted(signal, 'list')
      const entries: FsDirEntry[] = []
      for (const dirent of dirents) {
        if (dirent.isDirectory() && isStagingName(dirent.name)) continue
        // Both parents are normalized absolute paths: concatenation is what join would return, minus its cost.
        const childKey = childPath(target.targetKey, dirent.name)
        const displayPath = childPath(target.displayPath, dirent.name)
        if (dirent.isFile() || dirent.isDirectory()) {
          const type = dirent.isFile() ? 'file' : 'directory'
          entries.push({ name: dirent.name, type, target: { targetKey: FsTargetKey(childKey), displayPath } })
        } else if (dirent.isSymbolicLink()) {
          entries.push(this.#linkEntry(dirent.name, childKey, displayPath))
        } else {
          entries.push({ name: dirent.name, type: 'other', target: { targetKey: FsTargetKey(childKey), displayPath } })
        }
      }
      return entries.sort((a, b) => compareNames(a.name, b.name))
    } catch (err) {
      throw toFsError(err, 'list', target.displayPath)
    }
  }

  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'write')
    const bytes = encodeWriteContent(content, target.displayPath)
    assertWriteIntent(expected, target.displayPath)
    return this.#locks.run(target.targetKey, async () => {
      try {
        throwIfAborted(signal, 'write')
        // The sweep removes (and listings hide) such names: a file or directory made under one would be lost.
        const reserved = target.targetKey.split(sep).find(isStagingName)
        if (reserved !== undefined) {
          throw new FsError(
            'FS_UNSUPPORTED',
            `cannot write "${target.displayPath}": the name "${reserved}" is reserved for staging directories`,
          )
        }
        const current = statSync(target.targetKey, { bigint: true, throwIfNoEntry: false })
        if (current !== undefined) this.#assertRegular(current, 'write', target)
        if (expected?.kind === 'createIfAbsent' && current !== undefined) {
          throw new FsError('FS_NOT_OBSERVED', `cannot overwrite existing "${target.displayPath}" without reading it first`)
        }
        if (expected?.kind === 'replaceIfVersion') {
          if (current === undefined) {
            throw new FsError('FS_STALE_VERSION', `cannot write "${target.displayPath}": file no longer exists`)
          }
          if (versionOf(current) !== expected.version) {
            throw new FsError('FS_STALE_VERSION', `cannot write "${target.displayPath}": file changed since it was read`)
          }
        }
        const before = current === undefined ? null : await this.#diffBasis(target, current, signal)
        const published = await this.#publisher.publish({
          key: target.targetKey,
          displayPath: target.displayPath,
          bytes,
          mode: expected?.kind === 'createIfAbsent' ? 'link' : 'rename',
          permissions: current === undefined ? this.#newFileMode : Number(current.mode & 0o777n),
          owner: current === undefined ? undefined : { uid: Number(current.uid), gid: Number(current.gid) },
          verb: 'write',
          signal,
          hooks: this.#hooks,
        })
        return {
          operation: current === undefined ? 'create' : 'update',
          version: versionOf(published),
          before,
          after: normalizeLf(content),
        }
      } catch (err) {
        throw toFsError(err, 'write', target.displayPath)
      }
    })
  }

  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'edit')
    assertEditRequest(edit)
    return this.#locks.run(target.targetKey, async () => {
      let fd: number | undefined
      try {
        throwIfAborted(signal, 'edit')
        try {
          fd = openSync(target.targetKey, READ_FLAGS)
        } catch (err) {
          const errno = errnoOf(err)
          if (errno === 'ENOENT' || errno === 'ENOTDIR' || errno === 'ELOOP') {
            throw new FsError('FS_STALE_VERSION', `cannot edit "${target.displayPath}": file no longer exists`, {
              cause: err,
            })
          }
          throw err
        }
        const current = fstatSync(fd, { bigint: true })
        this.#assertRegular(current, 'edit', target)
        if (expected !== undefined && versionOf(current) !== expected.version) {
          throw new FsError('FS_STALE_VERSION', `cannot edit "${target.displayPath}": file changed since it was read`)
        }
        const bytes = await readAll(fd, Number(current.size), 'edit', signal)
        closeSync(fd)
        fd = undefined
        const result = editTextBytes(bytes, edit, target.displayPath)
        const published = await this.#publisher.publish({
          key: target.targetKey,
          displayPath: target.displayPath,
          bytes: result.bytes,
          mode: 'rename',
          permissions: Number(current.mode & 0o777n),
          owner: { uid: Number(current.uid), gid: Number(current.gid) },
          verb: 'edit',
          signal,
          hooks: this.#hooks,
        })
        return { version: versionOf(published), before: result.before, after: result.after }
      } catch (err) {
        throw toFsError(err, 'edit', target.displayPath)
      } finally {
        if (fd !== undefined) closeSync(fd)
      }
    })
  }

  #absolute(path: string, cwd: string | undefined): string {
    if (cwd !== undefined && (typeof cwd !== 'string' || !cwd.isWellFormed())) {
      throw new FsError('FS_NOT_FOUND', 'cwd must be a string of well-formed Unicode')
    }
    return absolutePath(path, cwd === undefined ? this.cwd : absolutePath(cwd, this.cwd))
  }

  #assertRegular(st: BigIntStats, verb: FsVerb, target: FsTarget): void {
    if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `cannot ${verb} "${target.displayPath}": not a regular file`)
  }

  /** A symlinked child: followed (one stat); broken or looping → `other` without metadata. */
  #linkEntry(name: string, childKey: string, displayPath: string): FsDirEntry {
    let st: BigIntStats | undefined
    try {
      st = statSync(childKey, { bigint: true, throwIfNoEntry: false })
    } catch (err) {
      if (!UNFOLLOWABLE.has(errnoOf(err) ?? '')) throw err
    }
    if (st === undefined) {
      return { name, type: 'other', target: { targetKey: FsTargetKey(childKey), displayPath } }
    }
    const target = { targetKey: FsTargetKey(canonicalPath(childKey)), displayPath }
    return { name, target, ...infoOf(st) }
  }

  async #diffBasis(target: FsTarget, current: BigIntStats, signal: AbortSignal | undefined): Promise<string | null> {
    if (current.size > BigInt(this.#diffBasisMaxBytes)) return null
    let fd: number | undefined
    try {
      fd = openSync(target.targetKey, READ_FLAGS)
      const bytes = await readAll(fd, Number(current.size), 'write', signal)
      const text = decodeTextOrNull(bytes)
      return text === null ? null : normalizeLf(text)
    } catch (err) {
      if (errnoOf(err) === undefined) throw err
      return null
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
}

async function* streamFile(target: FsTarget, signal: AbortSignal | undefined): AsyncGenerator<string> {
  const decoder = new TextChunkDecoder(target.displayPath, 'read')
  let fd: number | undefined
  let pending: Promise<number> | undefined
  try {
    fd = openSync(target.targetKey, READ_FLAGS)
    if (!fstatSync(fd).isFile()) {
      throw new FsError('FS_NOT_REGULAR_FILE', `cannot read "${target.displayPath}": not a regular file`)
    }
    // Two buffers: the next chunk is read while this one is decoded and consumed (read-ahead,
    // as createReadStream does), so the disk and the consumer overlap. Memory: 2 chunks.
    let current = Buffer.allocUnsafe(STREAM_CHUNK)
    let next = Buffer.allocUnsafe(STREAM_CHUNK)
    pending = readChunk(fd, current, 0, STREAM_CHUNK)
    for (;;) {
      throwIfAborted(signal, 'read')
      const n = await pending
      pending = undefined
      if (n === 0) break
      const filled = current
      current = next
      next = filled
      pending = readChunk(fd, current, 0, STREAM_CHUNK)
      // The decoder returns a string and copies any carried bytes, so `filled` is free again.
      const text = decoder.push(filled.subarray(0, n))
      if (text !== '') yield text
    }
    const tail = decoder.end()
    if (tail !== '') yield tail
  } catch (err) {
    throw toFsError(err, 'read', target.displayPath)
  } finally {
    // A read still in flight (the consumer stopped early, or failed) must end before the fd closes.
    if (pending !== undefined) await pending.catch(() => undefined)
    if (fd !== undefined) closeSync(fd)
  }
}
