import { FsEvent, Link, Node as MemNode, type IProcess, type Superblock } from '@jsonjoy.com/fs-core'

/**
 * memfs's own nodes, used directly on the hot paths: a lookup is a few `Map`
 * reads instead of the `Superblock`'s path parsing, `Result` objects, `Date`
 * stamps on every directory passed and uid syscalls; a write replaces a node's
 * buffer instead of opening a descriptor. Each fast path decides only the plain
 * case (plain directories, no symlink, every permission granted); anything else
 * returns `undefined` and the caller asks memfs, which then behaves (and fails)
 * exactly as before. A walk's result is remembered only by `lookup.ts`, which
 * forgets it on every change memfs announces that could falsify it, so a change
 * made straight on the `Volume` is always seen.
 */

/** A uid/gid pair a permission check is made for. */
export interface Caller {
  readonly uid: number
  readonly gid: number
}

/** memfs 4.80.1's `Node` fields set directly (most TS-private there): content and times, without the events and `Date`s of its setters. */
interface NodeFields {
  changes: MemNode['changes']
  _uid: number
  _gid: number
  _atime: Date
  _mtime: Date
  _ctime: Date
  _btime: Date
  buf: Buffer
  capacity: number
  size: number
  rdev: number
  _nlink: number
  mode: number
  ino: number
}

/** The own fields of a memfs 4.80.1 `Node`, in the order its constructor sets them. */
const NODE_LAYOUT = 'changes,_uid,_gid,_atime,_mtime,_ctime,_btime,buf,capacity,size,rdev,_nlink,mode,ino'
/** memfs 4.80.1's `Link` fields set directly (its constructor and `setChild` add `Date`s, arrays and events nobody asked for). */
interface LinkFields {
  changes: Link['changes']
  children: Map<string, Link | undefined>
  _steps: string[]
  ino: number
  length: number
  vol: Superblock
  parent: Link | undefined
  name: string
  node: MemNode
}

/** The own fields of a memfs 4.80.1 `Link` with its node set, in the order its constructor and `setNode` set them. */
const LINK_LAYOUT = 'changes,children,_steps,ino,length,vol,parent,name,node'

/** The `Superblock` fields its private `newInoNumber` and `createNode` use. */
interface InodeTable {
  ino: number
  inodes: Record<number, MemNode>
  releasedInos: number[]
}

const S_IFMT = 0o170000
const S_IFDIR = 0o040000
const S_IFREG = 0o100000
const S_IFLNK = 0o120000
const SLASH = 47
const DOT = 46
/** memfs's FsEventType (a const enum we cannot import under isolatedModules). */
const EVENT_CREATE = 0
const EVENT_MODIFY = 2

const EMPTY = new Uint8Array(0)

/**
 * The process memfs consults: POSIX paths whatever the host, and a uid/gid
 * read once. memfs asks for them on every path step; asking the kernel each
 * time (a syscall) was half the cost of a small write.
 */
export function volumeProcess({ uid, gid }: Caller): IProcess {
  return {
    getuid: () => uid,
    getgid: () => gid,
    cwd: () => '/',
    platform: 'linux',
    emitWarning: (message, type) => process.emitWarning(message, type),
    env: {},
  }
}

/** A view (no copy) of a file node's used bytes. */
export function bytesOf(node: MemNode): Uint8Array {
  const buf = node.buf as Uint8Array | undefined
  const size = node.getSize()
  // A buffer this backend wrote is exactly the content: no view to make.
  return buf === undefined ? EMPTY : buf.length === size ? buf : buf.subarray(0, size)
}

/** A plain copy of `bytes`, the caller's to change (a node's buffer is a `Buffer`, whose `slice` is only a view). */
export function copyOf(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes)
}

export const isDirectoryNode = (node: MemNode): boolean => (node.mode & S_IFMT) === S_IFDIR
export const isFileNode = (node: MemNode): boolean => (node.mode & S_IFMT) === S_IFREG

/** An empty, `.` or `..` segment of `path` between `from` and `to`: left to memfs's own path rules. */
function isOddSegment(path: string, from: number, to: number): boolean {
  const n = to - from
  return n === 0 || (path.charCodeAt(from) === DOT && (n === 1 || (n === 2 && path.charCodeAt(from + 1) === DOT)))
}

/**
 * The link at the absolute `path`, walked by name from `root`: `null` when a
 * name on the way is missing (absent), `undefined` where this walk does not
 * decide (a symlink at any step, a non-directory on the way, an empty, `.` or
 * `..` segment, a trailing `/`, or — with `access` — a directory it may not
 * search, as memfs checks before opening). A found link's path is `path`.
 */
export function walk(root: Link, path: string, access?: Caller): Link | null | undefined {
  if (path.charCodeAt(0) !== SLASH) return undefined
  const end = path.length
  if (end === 1) return root
  let link: Link | null = root
  for (let from = 1; ;) {
    let to = path.indexOf('/', from)
    if (to === -1) to = end
    if (isOddSegment(path, from, to)) return undefined
    if (link !== null) {
      const node: MemNode = link.node
      if (!isDirectoryNode(node) || (access !== undefined && !node.canExecute(access.uid, access.gid))) return undefined
      const child: Link | undefined = link.children.get(path.slice(from, to))
      if (child === undefined) link = null
      else if ((child.node.mode & S_IFMT) === S_IFLNK) return undefined
      else link = child
    }
    if (to === end) return link
    from = to + 1
  }
}

/**
 * Whether memfs would open a descriptor on `node` for writing: a free descriptor,
 * and the write permission memfs checks, as the host process (memfs's `open`
 * asks the host's uid there, not the volume's).
 */
export function canOpenForWrite(core: Superblock, node: MemNode, host: Caller): boolean {
  return core.openFiles < core.maxFiles && node.canWrite(host.uid, host.gid)
}

/** What building a node and its link without memfs's constructors needs, or `null` where memfs's `Node` or `Link` is not the layout this module knows. */
let nodeParts: { readonly FanOut: new () => MemNode['changes']; readonly empty: Buffer } | null | undefined

function knownNodeParts(core: Superblock): typeof nodeParts {
  if (nodeParts === undefined) {
    const probe = new MemNode(0, S_IFREG)
    const link = new Link(core, undefined, 'probe')
    link.setNode(probe)
    const table = core as unknown as Partial<InodeTable>
    const known =
      Object.keys(probe).join() === NODE_LAYOUT &&
      Object.keys(link).join() === LINK_LAYOUT &&
      typeof table.ino === 'number' &&
      Array.isArray(table.releasedInos)
    nodeParts = known ? { FanOut: probe.changes.constructor as new () => MemNode['changes'], empty: probe.buf } : null
  }
  return nodeParts
}

/**
 * `core.createNode(mode)` for `owner`, with every time `at`. memfs's `Node`
 * constructor asks the host for its uid and gid (two syscalls, whatever uid it
 * is given) and reads the clock four times: on a small write that was a fifth
 * of the cost. The node is built field by field as that constructor does, and
 * registered as `createNode` does (a released inode number first); where
 * memfs's layout is not the one known, memfs builds it.
 */
function newNode(core: Superblock, mode: number, owner: Caller, at: Date): MemNode {
  const parts = knownNodeParts(core)
  if (parts === null || parts === undefined) {
    const built = core.createNode(mode)
    stampNode(built, at)
    return built
  }
  const node = Object.create(MemNode.prototype) as MemNode
  const fields = node as unknown as NodeFields
  fields.changes = new parts.FanOut()
  fields._uid = owner.uid
  fields._gid = owner.gid
  fields._atime = at
  fields._mtime = at
  fields._ctime = at
  fields._btime = at
  fields.buf = parts.empty
  fields.capacity = 0
  fields.size = 0
  fields.rdev = 0
  fields._nlink = 1
  fields.mode = mode
  const table = core as unknown as InodeTable
  const released = table.releasedInos.pop()
  fields.ino = released ? released : (table.ino = (table.ino + 1) % 0xffffffff)
  table.inodes[fields.ino] = node
  return node
}

/**
 * A new, empty regular file `name` in `dir`, owned by `owner` and stamped `at`, announced on
 * memfs's change bus as its own create is. The link is built as memfs's `createChild` builds it
 * (steps, parent, count, the directory's mtime and ctime, its `child:add` event where anyone
 * listens), without the `Date`s and arrays made on the way; where memfs's layout is not the one
 * known, memfs builds it.
 */
export function createFileLink(core: Superblock, dir: Link, name: string, mode: number, owner: Caller, at: Date): Link {
  const node = newNode(core, S_IFREG | mode, owner, at)
  const parts = knownNodeParts(core)
  let link: Link
  if (parts === null || parts === undefined) {
    link = dir.createChild(name, node)
  } else {
    link = Object.create(Link.prototype) as Link
    const fields = link as unknown as LinkFields
    fields.changes = new parts.FanOut() as unknown as Link['changes']
    fields.children = new Map()
    fields._steps = [...dir.steps, name]
    fields.ino = node.ino
    fields.length = 0
    fields.vol = (dir as unknown as LinkFields).vol
    fields.parent = dir
    fields.name = name
    fields.node = node
    dir.children.set(name, link)
    dir.length++
    stampDirectory(dir.node, at)
    if (dir.changes.listeners.size > 0) dir.changes.emit(['child:add', link, dir])
  }
  core.changes.emit(new FsEvent(EVENT_CREATE, link.steps, link.node, link))
  return link
}

/** A directory's mtime and ctime after an entry was added (memfs's setter would stamp ctime with a `Date` of its own). */
function stampDirectory(node: MemNode, at: Date): void {
  const fields = node as unknown as NodeFields
  fields._mtime = at
  fields._ctime = at
}

/** Stamps `at` as the node's atime, mtime and ctime (memfs's setters would add a `Date` of the host clock for ctime). */
export function stampNode(node: MemNode, at: Date): void {
  const fields = node as unknown as NodeFields
  fields._atime = at
  fields._mtime = at
  fields._ctime = at
}

/**
 * Makes `bytes` the content of the file at `link` (no copy: core hands every hook bytes of the
 * hook's own, which nothing changes afterwards) and stamps `at` as its atime, mtime and ctime:
 * one synchronous step, so no reader sees a mix. The node gets a new buffer (a view of the old
 * one stays as it was). The change is announced as memfs's own truncate + write would (nothing
 * when an empty file stays empty), so versions and watchers follow. The buffer is adopted with no
 * spare capacity (0): memfs writes in place only within a node's capacity, so a later write or
 * growing truncate through the volume copies first and never changes bytes core still reads
 * (an edit outcome decodes `after` from them when first read).
 */
export function replaceContent(core: Superblock, link: Link, bytes: Uint8Array, at: Date): void {
  const node = link.node
  const fields = node as unknown as NodeFields
  const hadContent = fields.size > 0
  fields.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  fields.size = bytes.length
  fields.capacity = 0
  stampNode(node, at)
  // The node's own (deprecated) bus, as memfs's write announces it; nothing is built for no listener.
  if (node.changes.listeners.size > 0) node.changes.emit(['modify'])
  if (hadContent || bytes.length > 0) core.changes.emit(new FsEvent(EVENT_MODIFY, link.steps, node, link))
}
