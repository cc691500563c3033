/**
 * A worked example of a custom seamfs backend: a whole filesystem in a plain
 * `Map`. It passes the conformance kit; see `map-conformance.ts` for the
 * factory and the README section "Test your own backend". `FileSystem` does
 * every contract rule that is not about the store (validation, aborts, limits,
 * UTF-8, the literal edit, ordering, outcomes, error translation), so a backend
 * only maps its store onto the protected hooks.
 */
import {
  checkGuard,
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  type FsCapabilities,
  type FsDirEntry,
  type FsInfo,
  type FsTarget,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'

type MapFile = { readonly kind: 'file'; readonly bytes: Uint8Array; readonly generation: number }
type MapNode = MapFile | { readonly kind: 'dir' }

/** Normalizes a POSIX path against `cwd`: `.`/`..` folded, one leading `/`, no trailing `/`. */
export function normalize(path: string, cwd: string): string {
  const parts: string[] = []
  for (const part of `${path.startsWith('/') ? '' : cwd}/${path}`.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') parts.pop()
    else parts.push(part)
  }
  return `/${parts.join('/')}`
}

const parentOf = (key: string): string => key.slice(0, key.lastIndexOf('/')) || '/'
const versionOf = (node: MapNode): FsVersion => FsVersion(node.kind === 'dir' ? 'dir' : `g${node.generation}`)
const infoOf = (node: MapNode): FsInfo =>
  node.kind === 'dir' ? { type: 'directory', version: versionOf(node) } : { type: 'file', version: versionOf(node), size: node.bytes.length }

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
    for (let dir = parentOf(key); this.nodes.get(dir)?.kind !== 'dir'; dir = parentOf(dir)) {
      if (this.nodes.has(dir)) throw FsError.throughFile('write', key)
      this.nodes.set(dir, { kind: 'dir' })
    }
    const generation = ++this.#generation
    this.nodes.set(key, { kind: 'file', bytes, generation })
    return generation
  }

  override fileUrl(target: FsTarget): string {
    return `map://${target.targetKey.split('/').map(encodeURIComponent).join('/')}`
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    const p = parent.targetKey
    return child.targetKey === p || child.targetKey.startsWith(p === '/' ? '/' : `${p}/`)
  }

  protected override async resolvePath(path: string, cwd: string | undefined): Promise<FsTarget> {
    const key = normalize(path, normalize(cwd ?? '/', '/'))
    for (let dir = parentOf(key); dir !== '/'; dir = parentOf(dir)) {
      if (this.nodes.get(dir)?.kind === 'file') throw FsError.throughFile('resolve', key)
    }
    return { targetKey: FsTargetKey(key), displayPath: key }
  }

  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const node = this.nodes.get(target.targetKey)
    return node && infoOf(node)
  }

  protected override async lstatPath(path: string, cwd: string | undefined): Promise<FsInfo | undefined> {
    return this.statTarget(await this.resolvePath(path, cwd))
  }

  // The bytes are in memory already: core's own size check after the read suffices.
  protected override async readBytes(target: FsTarget): Promise<Uint8Array> {
    return this.#file(target, 'read').bytes
  }

  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const { bytes } = this.#file(target, 'read')
    return (function* () {
      for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024)
    })()
  }

  protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw FsError.notFound('list', target.displayPath)
    if (node.kind !== 'dir') throw FsError.notDirectory('list', target.displayPath)
    const prefix = target.targetKey === '/' ? '/' : `${target.targetKey}/`
    const entries: FsDirEntry[] = []
    for (const [key, child] of this.nodes) {
      if (key === '/' || !key.startsWith(prefix) || key.indexOf('/', prefix.length) !== -1) continue
      entries.push({ name: key.slice(prefix.length), target: { targetKey: FsTargetKey(key), displayPath: key }, ...infoOf(child) })
    }
    return entries
  }

  protected override async writeBytes(target: FsTarget, bytes: Uint8Array, { expected }: WriteRequest): Promise<WriteResult> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') throw FsError.notRegularFile('write', target.displayPath)
    checkGuard('write', target.displayPath, expected, current && versionOf(current))
    const generation = this.put(target.targetKey, bytes)
    return { created: current === undefined, version: FsVersion(`g${generation}`), before: current?.bytes ?? null }
  }

  protected override async updateBytes(target: FsTarget, { expected }: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const current = this.nodes.get(target.targetKey)
    if (current?.kind === 'dir') throw FsError.notRegularFile('edit', target.displayPath)
    checkGuard('edit', target.displayPath, expected, current && versionOf(current))
    return FsVersion(`g${this.put(target.targetKey, transform((current as MapFile).bytes))}`)
  }

  #file(target: FsTarget, verb: 'read'): MapFile {
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw FsError.notFound(verb, target.displayPath)
    if (node.kind !== 'file') throw FsError.notRegularFile(verb, target.displayPath)
    return node
  }
}
