/** The path check of `resolve`: is a file on the way? In requests that grow with the log of the depth. */
import type { Paths } from './paths.js'
import type { Store } from './store.js'

/** Up to this many ancestor directories, `resolve` HEADs each of them (together) instead of bisecting. */
const HEAD_EVERY_LEVEL = 2

/**
 * Whether a file lies on the path to `rel`, in a number of requests that grows with the log of
 * the depth, not the depth. A prefix holds keys only if every shorter one does, so the deepest
 * directory on the path is found by bisection (one LIST of one key per step); a plain file on
 * the path can only be the level just below it, and a key that is both a file and a directory
 * is looked for at that deepest directory. Up to {@link HEAD_EVERY_LEVEL} ancestors, a HEAD of
 * each (together) is as cheap and finds every such key.
 */
export async function underFile(store: Store, paths: Paths, rel: string, signal: AbortSignal | undefined): Promise<boolean> {
  const depth = paths.ancestorCount(rel)
  const isFile = async (level: number): Promise<boolean> => (await store.head(paths.objectKey(paths.ancestor(rel, level)), signal)) !== undefined
  const isDirectory = (level: number): Promise<boolean> => store.hasKeysUnder(paths.childPrefix(paths.ancestor(rel, level)), signal)
  const anyFile = async (levels: readonly number[]): Promise<boolean> => (await Promise.all(levels.map(isFile))).some(Boolean)
  if (depth <= HEAD_EVERY_LEVEL) return anyFile(Array.from({ length: depth }, (_, i) => i + 1))
  // The common case first: the parent exists (1 LIST + 1 HEAD, together).
  const [parentIsDirectory, parentIsFile] = await Promise.all([isDirectory(depth), isFile(depth)])
  if (parentIsFile) return true
  if (parentIsDirectory) return false
  // The deepest directory above the missing parent; level 0, the root, always is one.
  let low = 0
  let high = depth - 1
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (await isDirectory(mid)) low = mid
    else high = mid - 1
  }
  return anyFile([low, low + 1].filter((level) => level >= 1 && level < depth))
}
