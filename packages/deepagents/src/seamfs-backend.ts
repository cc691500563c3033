import { FsError, type ObservationPolicy, type FsTarget } from '@seamfs/core'
import { createFileToolsByName, DEFAULT_CONFIG, hostPolicy, type FileToolsByName } from '@seamfs/tools'
import type {
  BackendProtocolV2,
  DeleteResult,
  EditResult,
  FileDownloadResponse,
  FileInfo,
  FileUploadResponse,
  GlobResult,
  GrepMatch,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  WriteResult,
} from 'deepagents'
import { decodeBase64, isTextMime, mimeTypeOf } from './mime.js'
import { DEFAULT_MAX_TRANSFER_BYTES, type SeamfsBackendOptions } from './options.js'
import { childOf, toVirtual } from './paths.js'
import { errorText, withoutPrefix } from './results.js'
import { Scope, type Call } from './scope.js'
import { download, plain, readRaw, upload } from './transfer.js'

/** What deepagents' own backends answer for a file with no content (its `read_file` passes it on as is). */
export const EMPTY_CONTENT_WARNING = 'System reminder: File exists but has empty contents'

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g

/**
 * A deepagents backend (`BackendProtocolV2`) over any seamfs `FileSystem`. Text reads, writes,
 * edits, deletes, glob and grep run through the seamfs tools (`@seamfs/tools`), so they keep the
 * read-before-write policy, the caps and the model-facing error wording; listings, binary files
 * and transfers call the contract directly. Nothing throws out of a method: failures are the
 * `error` strings deepagents expects.
 */
export class SeamfsBackend implements BackendProtocolV2 {
  readonly #scope: Scope
  readonly #policy: ObservationPolicy | undefined
  readonly #tools: FileToolsByName
  readonly #maxTransferBytes: number
  readonly #readLimit: number

  constructor(options: Readonly<SeamfsBackendOptions>) {
    const root = options.root ?? '.'
    this.#policy = hostPolicy(options.policy)
    this.#scope = new Scope(options.fs, root, options.session, options.config?.callTimeoutMs ?? DEFAULT_CONFIG.callTimeoutMs)
    this.#tools = createFileToolsByName({ fs: this.#scope.fs, policy: this.#policy, cwd: root, config: options.config })
    this.#maxTransferBytes = options.maxTransferBytes ?? DEFAULT_MAX_TRANSFER_BYTES
    this.#readLimit = options.config?.readLimit ?? DEFAULT_CONFIG.readLimit
  }

  /** Direct children of a directory: directories end with `/`; sizes and times where the store lists them cheaply. */
  async ls(path: string): Promise<LsResult> {
    const call = this.#scope.call()
    try {
      const { target, virtual } = await this.#scope.resolve(path, call.signal)
      const files: FileInfo[] = []
      for (const entry of await this.#scope.fs.listDir(target, { signal: call.signal })) {
        if (entry.type === 'other') continue
        const at = childOf(virtual, entry.name)
        files.push(entry.type === 'directory' ? { path: `${at}/`, is_dir: true } : fileInfo(at, entry.size, entry.mtime))
      }
      return { files }
    } catch (err) {
      return { error: withoutPrefix(await this.#scope.virtualize(errorText(err))) }
    }
  }

  /** A window of a text file (0-based `offset`), its lines unnumbered; a binary file (by extension) whole, as bytes. */
  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    const call = this.#scope.call()
    try {
      const { target, relative, virtual } = await this.#scope.resolve(filePath, call.signal)
      const mimeType = mimeTypeOf(virtual)
      if (!isTextMime(mimeType)) return { content: await this.#readBinary(target, call), mimeType }
      const start = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0
      const count = Number.isFinite(limit) ? Math.min(Math.max(0, Math.floor(limit)), this.#readLimit) : 0
      if (count === 0) return { content: '', mimeType }
      const result = await this.#tools.read.execute({ file_path: relative, offset: start + 1, limit: count }, call)
      if (result.isError) return { error: withoutPrefix(await this.#scope.virtualize(result.text)) }
      if (result.image !== undefined) return { content: new Uint8Array(Buffer.from(result.image.data, 'base64')), mimeType: result.image.mimeType }
      const { lines = [], totalLines = 0 } = result.value ?? {}
      if (totalLines === 0) return { content: EMPTY_CONTENT_WARNING, mimeType }
      if (lines.length === 0) return { content: '', mimeType }
      const endLine = start + lines.length
      const next = endLine < totalLines ? { nextOffset: endLine } : {}
      return { content: lines.map((l) => l.text).join('\n'), mimeType, totalLines, startLine: start + 1, endLine, ...next }
    } catch (err) {
      return { error: withoutPrefix(await this.#scope.virtualize(errorText(err))) }
    }
  }

  /** The whole file as deepagents' `FileData` (v2): text for a text type, bytes otherwise. Records nothing. */
  async readRaw(filePath: string): Promise<ReadRawResult> {
    return this.#settle(
      () => readRaw(this.#scope, filePath, this.#maxTransferBytes),
      (error) => ({ error }),
    )
  }

  /**
   * Creates or replaces a file. With the policy, replacing needs a read of the current version
   * (`FS_NOT_OBSERVED`, or `FS_STALE_VERSION` when it changed since). A binary path (by
   * extension) takes base64, as in deepagents' own backends.
   */
  async write(filePath: string, content: string): Promise<WriteResult> {
    const call = this.#scope.call()
    try {
      const { target, relative, virtual } = await this.#scope.resolve(filePath, call.signal)
      if (!isTextMime(mimeTypeOf(virtual))) {
        await this.#writeBinary(target, content, call)
        return { path: virtual, filesUpdate: null }
      }
      const result = await this.#tools.write.execute({ file_path: relative, content }, call)
      return result.isError ? { error: await this.#scope.virtualize(result.text) } : { path: virtual, filesUpdate: null }
    } catch (err) {
      return { error: await this.#scope.virtualize(errorText(err)) }
    }
  }

  /** Literal replacement inside the store's critical section, guarded by the version the session read. */
  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    const call = this.#scope.call()
    try {
      const { relative, virtual } = await this.#scope.resolve(filePath, call.signal)
      const args = { file_path: relative, old_string: oldString, new_string: newString, replace_all: replaceAll }
      const result = await this.#tools.edit.execute(args, call)
      if (result.isError) return { error: await this.#scope.virtualize(result.text) }
      const before = result.value?.before ?? ''
      return { path: virtual, filesUpdate: null, occurrences: replaceAll ? countOf(before, oldString) : 1 }
    } catch (err) {
      return { error: await this.#scope.virtualize(errorText(err)) }
    }
  }

  /** Files whose path under `path` matches the glob (the seamfs glob: a pattern without `/` matches names at any depth). */
  async glob(pattern: string, path = '/'): Promise<GlobResult> {
    const call = this.#scope.call()
    try {
      const { relative } = await this.#scope.resolve(path, call.signal)
      const rooted = pattern.replace(/^\/+/, '')
      const result = await this.#tools.glob.execute({ pattern: rooted === '' ? '**' : rooted, path: relative }, call)
      if (result.isError) return { error: withoutPrefix(await this.#scope.virtualize(result.text)) }
      const value = result.value
      const files = (value?.paths ?? []).filter(inRoot).map((p): FileInfo => ({ path: toVirtual(p), is_dir: false }))
      return (value?.totalPaths ?? 0) > files.length ? { files, truncated: true } : { files }
    } catch (err) {
      return { error: withoutPrefix(await this.#scope.virtualize(errorText(err))) }
    }
  }

  /** Lines containing the literal `pattern`, in path order; `glob` filters file names as in deepagents. */
  async grep(pattern: string, path?: string | null, glob?: string | null, maxCount?: number | null): Promise<GrepResult> {
    const call = this.#scope.call()
    try {
      const { relative } = await this.#scope.resolve(path ?? '/', call.signal)
      const args = { pattern: pattern.replace(REGEX_SPECIAL, '\\$&'), path: relative, include: glob ?? null }
      const result = await this.#tools.grep.execute(args, call)
      if (result.isError) return { error: await this.#scope.virtualize(result.text) }
      const value = result.value
      const found = (value?.matches ?? []).filter((m) => inRoot(m.path)).map((m): GrepMatch => ({ path: toVirtual(m.path), line: m.line, text: m.text }))
      const matches = found.slice(0, capOf(maxCount))
      return (value?.totalMatches ?? 0) > matches.length ? { matches, truncated: true } : { matches }
    } catch (err) {
      return { error: await this.#scope.virtualize(errorText(err)) }
    }
  }

  /** One file (read first, under the policy) or one empty directory; never a tree, never the root. */
  async delete(filePath: string): Promise<DeleteResult> {
    const call = this.#scope.call()
    try {
      const { relative, virtual } = await this.#scope.resolve(filePath, call.signal)
      if (relative === '.') throw FsError.sandboxDenied('remove', '/', "the agent's root is never deleted")
      const result = await this.#tools.delete?.execute({ path: relative }, call)
      if (result === undefined) throw FsError.unsupported('remove', virtual, 'this store does not remove files')
      return result.isError ? { error: await this.#scope.virtualize(result.text) } : { path: virtual, filesUpdate: null }
    } catch (err) {
      return { error: await this.#scope.virtualize(errorText(err, 'delete')) }
    }
  }

  /** Host-side writes (skills, memory, history offload): unguarded, each at most `maxTransferBytes`. */
  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const out: FileUploadResponse[] = []
    for (const [path, content] of files) out.push(await upload(this.#scope, path, content, this.#maxTransferBytes))
    return out
  }

  /** Host-side reads: the bytes as stored, each at most `maxTransferBytes`. */
  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const out: FileDownloadResponse[] = []
    for (const path of paths) out.push(await download(this.#scope, path, this.#maxTransferBytes))
    return out
  }

  async #readBinary(target: FsTarget, call: Call): Promise<Uint8Array> {
    const { fs } = this.#scope
    const info = await fs.stat(target, { signal: call.signal })
    if (info === undefined) throw FsError.notFound('read', target.displayPath)
    if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
    const bytes = await fs.readBytes(target, { maxBytes: this.#maxTransferBytes, signal: call.signal })
    this.#policy?.recordPresent(call.session, target, info.version)
    return plain(bytes)
  }

  async #writeBinary(target: FsTarget, base64: string, call: Call): Promise<void> {
    const bytes = decodeBase64(base64)
    if (bytes === undefined) throw FsError.at('FS_NOT_TEXT', 'write', target.displayPath, 'a binary file takes base64 content')
    if (bytes.length > this.#maxTransferBytes) throw FsError.tooLarge('write', target.displayPath, bytes.length, this.#maxTransferBytes)
    const expected = this.#policy?.writeIntent(call.session, target)
    const outcome = await this.#scope.fs.writeBytes(target, bytes, { expected, signal: call.signal })
    this.#policy?.recordPresent(call.session, target, outcome.version)
  }

  async #settle<T>(body: () => Promise<T>, failed: (error: string) => T): Promise<T> {
    try {
      return await body()
    } catch (err) {
      return failed(withoutPrefix(await this.#scope.virtualize(errorText(err))))
    }
  }
}

/**
 * A deepagents backend over `options.fs`: pass it as `createDeepAgent({ model, backend })`.
 * One backend may serve many runs: observations are kept per LangGraph thread unless
 * `options.session` names one.
 */
export function createSeamfsBackend(options: Readonly<SeamfsBackendOptions>): SeamfsBackend {
  return new SeamfsBackend(options)
}

function fileInfo(path: string, size: number | undefined, mtime: number | undefined): FileInfo {
  return { path, is_dir: false, ...(size === undefined ? {} : { size }), ...(mtime === undefined ? {} : { modified_at: new Date(mtime).toISOString() }) }
}

/** A shown path inside the root (the tools print paths outside their cwd absolute). */
function inRoot(path: string): boolean {
  return !path.startsWith('/') && path !== '..' && !path.startsWith('../')
}

/** deepagents' `maxCount`: a positive integer caps the matches; anything else (0, negative, NaN, a fraction, none) is no cap. */
function capOf(maxCount: number | null | undefined): number {
  return typeof maxCount === 'number' && Number.isSafeInteger(maxCount) && maxCount > 0 ? maxCount : Number.POSITIVE_INFINITY
}

function countOf(text: string, needle: string): number {
  const lf = needle.replaceAll('\r\n', '\n')
  return lf === '' ? 0 : text.split(lf).length - 1
}
