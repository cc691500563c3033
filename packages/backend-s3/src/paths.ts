import { posix } from 'node:path'
import { FsError, FsTargetKey, isNormalizedAbsolute, type FsTarget, type FsVerb } from '@seamfs/core/backend'

/** Normalizes a key prefix to `a/b/` (or `''`); `.`/`..` segments are refused, empty ones dropped. */
export function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined) return ''
  if (typeof prefix !== 'string' || prefix.includes('\0')) throw new TypeError('prefix must be a string without NUL')
  const segments = prefix.split('/').filter((s) => s !== '')
  if (segments.some((s) => s === '.' || s === '..')) throw new RangeError(`prefix "${prefix}" must not contain . or .. segments`)
  return segments.length === 0 ? '' : `${segments.join('/')}/`
}

/**
 * The namespace of one filesystem: POSIX paths inside it (`/` is the prefix root), relative
 * paths (`a/b.txt`, `''` for the root), object keys (`prefix + rel`) and target keys
 * (`s3://bucket/prefix + rel`). A path is normalized before it becomes a key, so `..`,
 * absolute paths and separators written any other way cannot leave the prefix: `..` stops at
 * the root, `%2F` or `\` are ordinary characters of one segment.
 */
export class Paths {
  readonly bucket: string
  readonly prefix: string
  readonly cwd: string
  /** Target key of the root, ending in `/`. */
  readonly #base: string

  constructor(bucket: string, prefix: string, cwd: string | undefined) {
    this.bucket = bucket
    this.prefix = prefix
    this.#base = `s3://${bucket}/${prefix}`
    this.cwd = posix.resolve('/', cwd ?? '/')
  }

  /** The normalized absolute path of `path` (relative to `cwd`, itself relative to the filesystem's cwd). */
  absolute(path: string, cwd: string | undefined): string {
    if (cwd === undefined && isNormalizedAbsolute(path)) return path
    return posix.resolve(cwd === undefined ? this.cwd : posix.resolve(this.cwd, cwd), path)
  }

  /** The target of a relative path (`''` is the root). */
  target(rel: string): FsTarget {
    return { targetKey: FsTargetKey(this.#base + rel), displayPath: `/${rel}` }
  }

  /**
   * The relative path of a target this filesystem minted. A key from another bucket or
   * prefix, or one that is not normalized (a forged key), is not found: no path reaches it.
   */
  relOf(target: FsTarget, verb: FsVerb): string {
    const key: string = target.targetKey
    const rel = typeof key === 'string' && key.startsWith(this.#base) ? key.slice(this.#base.length) : undefined
    if (rel === undefined || (rel !== '' && (rel.includes('\0') || rel.split('/').some((s) => s === '' || s === '.' || s === '..')))) {
      throw FsError.notFound(verb, target.displayPath)
    }
    return rel
  }

  /** The object key of a file. */
  objectKey(rel: string): string {
    return this.prefix + rel
  }

  /** The key prefix of a directory's children (the prefix itself for the root). */
  childPrefix(rel: string): string {
    return rel === '' ? this.prefix : `${this.prefix}${rel}/`
  }

  /** How many ancestors `rel` has below the root (`a/b/c.txt`: 2). */
  ancestorCount(rel: string): number {
    let count = 0
    for (let at = rel.indexOf('/'); at >= 0; at = rel.indexOf('/', at + 1)) count++
    return count
  }

  /** The relative path of the ancestor of `rel` at `level` (1: the outermost below the root; `''` at 0). */
  ancestor(rel: string, level: number): string {
    let end = -1
    for (let i = 0; i < level; i++) {
      end = rel.indexOf('/', end + 1)
      if (end < 0) throw new RangeError(`"${rel}" has fewer than ${level} ancestors`)
    }
    return level === 0 ? '' : rel.slice(0, end)
  }

  /** `s3://bucket/key`, each key segment percent-encoded. */
  url(rel: string): string {
    return `s3://${this.bucket}/${this.objectKey(rel).split('/').map(encodeURIComponent).join('/')}`
  }

  /** True when `child` is `parent` or below it (on target keys, which end in `/` only at the root). */
  static contains(parent: FsTarget, child: FsTarget): boolean {
    const p: string = parent.targetKey
    const c: string = child.targetKey
    return c === p || c.startsWith(p.endsWith('/') ? p : `${p}/`)
  }
}
