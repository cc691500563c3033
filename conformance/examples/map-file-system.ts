/**
 * A worked example of a custom seamfs backend: a whole filesystem in a plain
 * `Map`, about 200 lines. It passes the conformance kit; see
 * `map-conformance.ts` for the factory and the README section "Test your own
 * backend". Every rule it relies on from `@seamfs/core` (UTF-8 checks, the
 * literal edit, ordering) is shared code, so a backend only maps its store.
 */
import {
  assertEditRequest,
  assertPathText,
  assertWriteIntent,
  compareNames,
  decodeText,
  decodeTextOrNull,
  editTextBytes,
  encodeWriteContent,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
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
  type FsWriteOutcome,
  type ResolveOptions,
  type SignalOptions,
  type WriteOptions,
} from '@seamfs/core'

type MapNode = { readonly kind: 'file'; readonly bytes: Uint8Array; readonly generation: number } | { readonly kind: 'dir' }

/** Normalizes a POSIX path against `cwd`: `.`/`..` folded, one leading `/`, no trailing `/`. */
function normalize(path: string, cwd: string): string {
  const parts: string[] = []
  for (const part of `${path.startsWith('/') ? '' : cwd}/${path}`.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') parts.pop()
    else parts.push(part)
  }
  return `/${parts.join('/')}`
}

const parentOf = (key: string): string => key.slice(0, key.lastIndexOf('/')) || '/'

export class MapFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = Object.freeze({
    symlinks: false,
    permissions: false,
    processPath: false,
    // Check and publish happen in one synchronous step: nothing can interleave.
    createIfAbsent: 'atomic',
    replaceIfVersion: 'atomic',
    versionSource: 'generation',
    newlineInNames: true,
    emptyDirectories: true,
  })
  readonly nodes = new Map<string, MapNode>([['/', { kind: 'dir' }]])
  #generation = 0

  /** Stores `bytes` at `key` (creating parents), bypassing every guard: also the external-change hook. */
  put(key: string, bytes: Uint8Array): number {
    this.#mkdirs(parentOf(key), key)
    const generation = ++this.#generation
    this.nodes.set(key, { kind: 'file', bytes, generation })
    return generation
  }

  override async resolve(path: string, opts: ResolveOptions = {}): Promise<FsTarget> {
    throwIfAborted(opts.signal, 'resolve')
    const key = this.#normalize(path, opts.cwd)
    for (let dir = parentOf(key); dir !== '/'; dir = parentOf(dir)) {
      if (this.nodes.get(dir)?.kind === 'file') {
        throw new FsError('FS_NOT_FOUND', `cannot resolve "${key}": a parent path segment is not a directory`)
      }
    }
    return { targetKey: FsTargetKey(key), displayPath: key }
  }

  override processPath(): string {
    throw new FsError('FS_UNSUPPORTED', 'a Map has no process path')
  }

  override fileUrl(target: FsTarget): string {
    return `map://${target.targetKey.split('/').map(encodeURIComponent).join('/')}`
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    const p = parent.targetKey
    return child.targetKey === p || child.targetKey.startsWith(p === '/' ? '/' : `${p}/`)
  }

  override async stat(target: FsTarget, opts: SignalOptions = {}): Promise<FsInfo | undefined> {
    throwIfAborted(opts.signal, 'stat')
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) return undefined
    if (node.kind === 'dir') return { type: 'directory', version: FsVersion('dir') }
    return { type: 'file', version: FsVersion(`g${node.generation}`), size: node.bytes.length }
  }

  override async lstat(path: string, opts: ResolveOptions = {}): Promise<FsPathInfo | undefined> {
    throwIfAborted(opts.signal, 'lstat')
    return this.stat({ targetKey: FsTargetKey(this.#normalize(path, opts.cwd)), displayPath: path })
  }

  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    throwIfAborted(opts.signal, 'read')
    return decodeText(this.#file(target, 'read').bytes, target.displayPath)
  }

  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    throwIfAborted(opts.signal, 'read')
    const { bytes } = this.#file(target, 'read')
    const decoder = new TextChunkDecoder(target.displayPath)
    return (async function* () {
      for (let at = 0; at < bytes.length; at += 64 * 1024) {
        throwIfAborted(opts.signal, 'read')
        yield decoder.push(bytes.subarray(at, at + 64 * 1024))
      }
      yield decoder.end()
    })()
  }

  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    throwIfAborted(opts.signal, 'list')
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw new FsError('FS_NOT_FOUND', `cannot list "${target.displayPath}": not found`)
    if (node.kind !== 'dir') throw new FsError('FS_NOT_DIRECTORY', `cannot list "${target.displayPath}": not a directory`)
    const prefix = target.targetKey === '/' ? '/' : `${target.targetKey}/`
    const entries: FsDirEntry[] = []
    for (const [key, child] of this.nodes) {
      if (key === '/' || !key.startsWith(prefix) || key.indexOf('/', prefix.length) !== -1) continue
      const name = key.slice(prefix.length)
      const childTarget = { targetKey: FsTargetKey(key), displayPath: key }
      entries.push(
        child.kind === 'dir'
          ? { name, type: 'directory', target: childTarget }
          : { name, type: 'file', target: childTarget, size: child.bytes.length, version: FsVersion(`g${child.generation}`) },
      )
    }
    return entries.sort((a, b) => compareNames(a.name, b.name))
  }

  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'write')
    assertWriteIntent(expected, target.displayPath)
    const bytes = encodeWriteContent(content, target.displayPath)
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') {
      throw new FsError('FS_NOT_REGULAR_FILE', `cannot write "${target.displayPath}": not a regular file`)
    }
    if (expected?.kind === 'createIfAbsent' && current !== undefined) {
      throw new FsError('FS_NOT_OBSERVED', `cannot overwrite existing "${target.displayPath}" without reading it first`)
    }
    if (expected?.kind === 'replaceIfVersion' && (current === undefined || `g${current.generation}` !== expected.version)) {
      throw new FsError('FS_STALE_VERSION', `cannot write "${target.displayPath}": file changed since it was read`)
    }
    const before = current === undefined ? null : decodeTextOrNull(current.bytes)
    const generation = this.put(target.targetKey, bytes)
    return {
      operation: current === undefined ? 'create' : 'update',
      version: FsVersion(`g${generation}`),
      before: before === null ? null : normalizeLf(before),
      after: normalizeLf(content),
    }
  }

  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    throwIfAborted(opts.signal, 'edit')
    assertEditRequest(edit)
    const current = this.nodes.get(target.targetKey)
    if (current === undefined) throw new FsError('FS_STALE_VERSION', `cannot edit "${target.displayPath}": file no longer exists`)
    if (current.kind !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `cannot edit "${target.displayPath}": not a regular file`)
    if (opts.expected !== undefined && opts.expected.version !== `g${current.generation}`) {
      throw new FsError('FS_STALE_VERSION', `cannot edit "${target.displayPath}": file changed since it was read`)
    }
    const result = editTextBytes(current.bytes, edit, target.displayPath)
    const generation = this.put(target.targetKey, result.bytes)
    return { version: FsVersion(`g${generation}`), before: result.before, after: result.after }
  }

  #normalize(path: string, cwd: string | undefined): string {
    assertPathText(path, 'resolve')
    return normalize(path, normalize(cwd ?? '/', '/'))
  }

  #file(target: FsTarget, verb: 'read'): Extract<MapNode, { kind: 'file' }> {
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${target.displayPath}": not found`)
    if (node.kind !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `cannot ${verb} "${target.displayPath}": not a regular file`)
    return node
  }

  #mkdirs(dir: string, forKey: string): void {
    const node = this.nodes.get(dir)
    if (node?.kind === 'dir') return
    if (node?.kind === 'file') {
      throw new FsError('FS_NOT_FOUND', `cannot write "${forKey}": a parent path segment is not a directory`)
    }
    this.#mkdirs(parentOf(dir), forKey)
    this.nodes.set(dir, { kind: 'dir' })
  }
}
