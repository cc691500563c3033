import type { Link, Superblock } from '@jsonjoy.com/fs-core'

/** The entries of a directory link, without `.` and `..`. */
export function childLinks(dir: Link): Link[] {
  const children: Link[] = []
  for (const [name, child] of dir.children) {
    if (name !== '.' && name !== '..' && child !== undefined) children.push(child)
  }
  return children
}

/** The absolute path of a link, as memfs's path-taking calls expect it. */
export function pathOf(link: Link): string {
  return link.getPath() || '/'
}

/**
 * Whether entries may be added to or removed from the directory `dir`: the
 * check memfs itself makes before a rename, made first so that nothing is
 * changed by a call that memfs would refuse half way.
 */
export function isWritableDirectory(dir: Link | undefined): boolean {
  const node = dir?.getNode()
  return node !== undefined && node.isDirectory() && node.canWrite() && node.canExecute()
}

/**
 * The tree at `link`, itself first, each directory before its entries; links
 * are listed, never followed. Iterative: a deep tree cannot overflow the stack.
 */
export function treeLinks(link: Link): Link[] {
  const tree = [link]
  for (let at = 0; at < tree.length; at++) {
    const current = tree[at] as Link
    if (current.getNode().isDirectory()) for (const child of childLinks(current)) tree.push(child)
  }
  return tree
}

/**
 * Removes `tree` (from {@link treeLinks}) entries first, through memfs's own
 * calls, so that its change events fire and the inodes of removed files are
 * released. A symlink is unlinked as the link it is.
 */
export function removeTree(core: Superblock, tree: readonly Link[]): void {
  for (let at = tree.length - 1; at >= 0; at--) {
    const link = tree[at] as Link
    // `recursive` skips memfs's child count, which drifts after some renames it does itself; the directory is empty here.
    const node = link.getNode()
    if (node.isDirectory()) {
      core.rmdir(pathOf(link), true)
      // memfs's rmdir keeps the inode; unlink releases a file's.
      core.deleteNode(node)
    } else {
      core.unlink(pathOf(link))
    }
  }
}
