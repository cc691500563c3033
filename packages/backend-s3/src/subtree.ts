/** `listTree` over S3: every key below a directory's prefix, from one paginated LIST without a delimiter. */
import { FsError, FsVersion, type FsTarget, type FsTreeEntry, type TreePages, type TreeRequest } from '@seamfs/core/backend'
import type { Paths } from './paths.js'
import type { ListedFile } from './revisions.js'
import type { Store } from './store.js'

/** What the listing needs of the filesystem. */
export interface SubtreeSite {
  readonly paths: Paths
  readonly store: Store
  /** ListObjectsV2 carries no VersionId: the ETag alone is the version only in an unversioned bucket. */
  readonly withVersion: boolean
}

/** A name a path can reach: not empty, `.` or `..` (as in a listing). */
const isEntryName = (name: string): boolean => name !== '' && name !== '.' && name !== '..'

/**
 * The entries below the directory `target`, a page per LIST page (1,000 keys): files from the keys,
 * directories from the segments on their way (and from `dir/` markers), each once. As in a
 * listing, a key that is both an object and a prefix is the file (nothing below it is listed), and
 * a key with an empty, `.` or `..` segment on its way is listed up to there (no path reaches past
 * it). Below the root, the directory's own key is HEAD-ed with the first LIST: an object there
 * makes it `FS_NOT_DIRECTORY` (what `stat` says), no key at all `FS_NOT_FOUND`.
 */
export async function listSubtree({ paths, store, withVersion }: SubtreeSite, target: FsTarget, request: TreeRequest): Promise<TreePages> {
  const { signal, prune } = request
  const path = target.displayPath
  const rel = paths.relOf(target, 'list')
  const objects = store.objectsUnder(paths.childPrefix(rel), path, signal)
  const [first, file] = await Promise.all([objects.next(), rel === '' ? undefined : store.head(paths.objectKey(rel), signal)]).catch(async (err: unknown) => {
    await objects.return(undefined).catch(() => undefined)
    throw err
  })
  if (file !== undefined) {
    await objects.return(undefined)
    throw FsError.notDirectory('list', path)
  }
  if (first.done === true || first.value.length === 0) {
    await objects.return(undefined)
    if (rel === '') return []
    throw FsError.notFound('list', path)
  }
  const tree = new Tree(rel, paths, withVersion, prune)
  return pagesOf(tree, first.value, objects)
}

async function* pagesOf(tree: Tree, first: readonly ListedFile[], rest: AsyncGenerator<ListedFile[]>): AsyncGenerator<FsTreeEntry[]> {
  const firstPage = tree.page(first)
  if (firstPage.length > 0) yield firstPage
  for await (const objects of rest) {
    const page = tree.page(objects)
    if (page.length > 0) yield page
  }
}

/** The entries made so far: which directories were listed, which paths are files. */
class Tree {
  readonly #dirs = new Set<string>()
  readonly #files = new Set<string>()

  constructor(
    readonly rel: string,
    readonly paths: Paths,
    readonly withVersion: boolean,
    readonly prune: ReadonlySet<string>,
  ) {}

  /** The entries one LIST page adds (keys in key order: a file comes before the keys below its name). */
  page(objects: readonly ListedFile[]): FsTreeEntry[] {
    const entries: FsTreeEntry[] = []
    for (const object of objects) this.#add(object, entries)
    return entries
  }

  #add(object: ListedFile, entries: FsTreeEntry[]): void {
    const marker = object.name.endsWith('/')
    const segments = (marker ? object.name.slice(0, -1) : object.name).split('/')
    // The directory's own marker.
    if (object.name === '') return
    let path = ''
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i] as string
      if (!isEntryName(name)) return
      path = path === '' ? name : `${path}/${name}`
      // A file of that name was listed: it is what the path names, nothing below it is reachable.
      if (this.#files.has(path)) return
      const last = i === segments.length - 1
      if (last && !marker) {
        this.#files.add(path)
        entries.push(this.#file(name, path, object))
        return
      }
      if (!this.#dirs.has(path)) {
        this.#dirs.add(path)
        entries.push({ name, path, type: 'directory', target: this.paths.target(this.#rel(path)) })
      }
      if (this.prune.has(name)) return
    }
  }

  #file(name: string, path: string, object: ListedFile): FsTreeEntry {
    return {
      name,
      path,
      type: 'file',
      target: this.paths.target(this.#rel(path)),
      ...(object.size === undefined ? {} : { size: object.size }),
      ...(object.lastModified === undefined ? {} : { mtime: object.lastModified }),
      ...(this.withVersion && object.etag !== undefined ? { version: FsVersion(object.etag) } : {}),
    }
  }

  #rel(path: string): string {
    return this.rel === '' ? path : `${this.rel}/${path}`
  }
}
