import type { Link, Superblock } from '@jsonjoy.com/fs-core'
import { isDirectoryNode, walk, type Caller } from './nodes.js'

/** The most paths each table remembers; a full table starts over. */
const MAX_REMEMBERED = 16_384

/** memfs's FsEventType values (a const enum we cannot import under isolatedModules). */
const EVENT_DELETE = 1
const EVENT_ATTRIB = 3
const EVENT_MOVE = 4

/** True for a change event after which a remembered walk may no longer hold: a removal, a move, a mode or owner change. */
export function forgetsWalks(type: number): boolean {
  return type === EVENT_DELETE || type === EVENT_ATTRIB || type === EVENT_MOVE
}

/**
 * The plain walks of `nodes.ts`, remembered by path. A walk re-hashes every name on the way
 * (most of a small read's cost); a remembered one is one lookup of a string already hashed.
 *
 * Only found links are remembered, never an absence or an undecided walk, and everything is
 * forgotten ({@link forget}) on each change memfs announces that could make a remembered walk
 * wrong: a removal, a move, a mode or owner change. A creation never can (it only adds a name
 * where there was none), nor can a content change. A volume whose root was replaced
 * (`reset()`, which announces nothing) is noticed by the root itself. And a remembered link is
 * used only while it still hangs, link by link, from the root: memfs announces a removal before
 * it makes it (a listener that calls the filesystem then would remember a link about to go), and
 * a few of its `Superblock` helpers change the tree without announcing anything.
 */
export class LinkLookup {
  readonly #core: Superblock
  readonly #found = new Map<string, Link>()
  #root: Link
  #stopped = false

  constructor(core: Superblock) {
    this.#core = core
    this.#root = core.root
  }

  /** Forgets every remembered walk. */
  forget(): void {
    this.#found.clear()
  }

  /** Remembers nothing from now on (the filesystem no longer hears memfs's changes). */
  stop(): void {
    this.#stopped = true
    this.forget()
  }

  /**
   * {@link walk} from the volume's root, remembered. With `access`, a found link counts only
   * where every directory above it is searchable by that caller (what the walk itself checks);
   * else the walk as that caller decides.
   */
  find(path: string, access?: Caller): Link | null | undefined {
    const root = this.#core.root
    if (this.#stopped) return walk(root, path, access)
    if (root !== this.#root) {
      this.forget()
      this.#root = root
    }
    let link = this.#found.get(path)
    if (link !== undefined && !attached(link, root)) link = undefined
    if (link === undefined) {
      const walked = walk(root, path)
      if (walked === null || walked === undefined) return access === undefined || walked === null ? walked : walk(root, path, access)
      if (this.#found.size >= MAX_REMEMBERED) this.#found.clear()
      this.#found.set(path, walked)
      link = walked
    }
    return access === undefined || searchable(link, access) ? link : walk(root, path, access)
  }

  /** The directory holding `path` and the name in it, both plain and searchable by `access` (what memfs checks before it creates a file there); `undefined` otherwise. */
  parent(path: string, access: Caller): { readonly dir: Link; readonly name: string } | undefined {
    const slash = path.lastIndexOf('/')
    if (slash === -1) return undefined
    const name = path.slice(slash + 1)
    if (name === '' || name === '.' || name === '..') return undefined
    const dir = this.find(slash === 0 ? '/' : path.slice(0, slash), access)
    if (dir === null || dir === undefined || !isDirectoryNode(dir.node) || !dir.node.canExecute(access.uid, access.gid)) return undefined
    return { dir, name }
  }
}

/** True when every directory above `link` may be searched by `access`. */
function searchable(link: Link, access: Caller): boolean {
  // memfs's root is its own parent.
  for (let dir = link.parent; dir; dir = dir.parent === dir ? undefined : dir.parent) {
    if (!dir.node.canExecute(access.uid, access.gid)) return false
  }
  return true
}

/** True while `link` hangs, link by link, from `root` (no change, announced or not, detached or replaced it). */
function attached(link: Link, root: Link): boolean {
  for (let at = link; at !== root;) {
    const parent = at.parent
    if (parent === undefined || parent.children.get(at.name) !== at) return false
    at = parent
  }
  return true
}
