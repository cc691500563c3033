/**
 * A worked example of a custom seamfs backend: a whole filesystem in a plain
 * `Map`. It passes the conformance kit; see `map-conformance.ts` for the
 * factory and the README section "Test your own backend". `FileSystem` does
 * every contract rule that is not about the store (validation, aborts, limits,
 * UTF-8, the literal edit, ordering, outcomes, error translation), so a backend
 * only maps its store onto the protected hooks. The optional hooks
 * (`removeTarget`, `renameTarget`, `makeDirectory`) are declared in
 * `capabilities`; `readBytes`/`writeBytes` come with `loadBytes`/`publishBytes`.
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
  type FsRemoveOutcome,
  type FsRenameOutcome,
  type FsTarget,
  type RemoveRequest,
  type RenameRequest,
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
    // Removes, renames and mkdir are one synchronous step each, like writes.
    remove: true,
    rename: 'atomic',
    renameDirectories: true,
    createDirectory: 'native',
  })
  readonly nodes = new Map<string, MapNode>([['/', { kind: 'dir' }]])
  #generation = 0

  /** Stores `bytes` at `key` (creating parents), bypassing every guard: also the external-change hook. */
  put(key: string, bytes: Uint8Array): number {
    const missing = this.#missingParents(key)
    if (missing === undefined) throw FsError.throughFile('write', key)
    for (const dir of missing) this.nodes.set(dir, { kind: 'dir' })
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
  // A copy: `readBytes` hands these to the caller, who may change them.
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    return new Uint8Array(this.#file(target, 'read').bytes)
  }

  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    const { bytes } = this.#file(target, 'read')
    return (function* () {
      // A copy each: a chunk is the caller's, who may write into it; a view would write into the store.
      for (let at = 0; at < bytes.length; at += 64 * 1024) yield new Uint8Array(bytes.subarray(at, at + 64 * 1024))
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

  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, { expected }: WriteRequest): Promise<WriteResult> {
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

  protected override async removeTarget(target: FsTarget, { expected, recursive, maxEntries }: RemoveRequest): Promise<FsRemoveOutcome> {
    const path = target.displayPath
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw expected === undefined ? FsError.notFound('remove', path) : FsError.stale('remove', path, 'gone')
    checkGuard('remove', path, expected, versionOf(node))
    if (target.targetKey === '/') throw FsError.at('FS_PERMISSION_DENIED', 'remove', path, 'the root cannot be removed')
    // Count first, remove after: a refusal removes nothing.
    const keys = this.#tree(target.targetKey)
    if (keys.length > 1 && !recursive) throw FsError.notEmpty('remove', path)
    if (keys.length > maxEntries) {
      throw FsError.tooManyEntries('remove', path, keys.length, maxEntries)
    }
    for (const key of keys) this.nodes.delete(key)
    return { type: node.kind === 'dir' ? 'directory' : 'file', entries: keys.length }
  }

  protected override async renameTarget(from: FsTarget, to: FsTarget, { expected, overwrite }: RenameRequest): Promise<FsRenameOutcome> {
    const node = this.nodes.get(from.targetKey)
    if (node === undefined) throw expected === undefined ? FsError.notFound('rename', from.displayPath) : FsError.stale('rename', from.displayPath, 'gone')
    checkGuard('rename', from.displayPath, expected, versionOf(node))
    const existing = this.nodes.get(to.targetKey)
    if (existing !== undefined) {
      if (overwrite === false) throw FsError.destinationExists('rename', to.displayPath)
      if (existing.kind === 'dir') throw FsError.notRegularFile('rename', to.displayPath)
      if (node.kind === 'dir') throw FsError.unsupported('rename', to.displayPath, 'a directory never replaces a file')
      if (overwrite !== true) checkGuard('rename', to.displayPath, overwrite, versionOf(existing))
    }
    const missing = this.#missingParents(to.targetKey)
    if (missing === undefined) throw FsError.notDirectory('rename', to.displayPath)
    // Every check passed: from here on nothing can fail, and nothing else runs until the move is done.
    for (const dir of missing) this.nodes.set(dir, { kind: 'dir' })
    for (const key of this.#tree(from.targetKey)) {
      const moved = this.nodes.get(key) as MapNode
      this.nodes.delete(key)
      this.nodes.set(to.targetKey + key.slice(from.targetKey.length), moved)
    }
    // The node moved as it is: it keeps its generation, so its version names the same content.
    return { type: node.kind === 'dir' ? 'directory' : 'file', replaced: existing !== undefined, version: versionOf(node) }
  }

  protected override async makeDirectory(target: FsTarget): Promise<boolean> {
    const node = this.nodes.get(target.targetKey)
    if (node?.kind === 'dir') return false
    const missing = this.#missingParents(target.targetKey)
    if (node !== undefined || missing === undefined) throw FsError.notDirectory('create directory', target.displayPath)
    for (const dir of [...missing, target.targetKey]) this.nodes.set(dir, { kind: 'dir' })
    return true
  }

  /** The directories missing above `key`, top first; `undefined` when a file is on the way. */
  #missingParents(key: string): string[] | undefined {
    const missing: string[] = []
    for (let dir = parentOf(key); this.nodes.get(dir)?.kind !== 'dir'; dir = parentOf(dir)) {
      if (this.nodes.has(dir)) return undefined
      missing.unshift(dir)
    }
    return missing
  }

  /** `key` and every key below it. */
  #tree(key: string): string[] {
    const prefix = key === '/' ? '/' : `${key}/`
    return [key, ...[...this.nodes.keys()].filter((k) => k !== key && k.startsWith(prefix))]
  }

  #file(target: FsTarget, verb: 'read'): MapFile {
    const node = this.nodes.get(target.targetKey)
    if (node === undefined) throw FsError.notFound(verb, target.displayPath)
    if (node.kind !== 'file') throw FsError.notRegularFile(verb, target.displayPath)
    return node
  }
}
