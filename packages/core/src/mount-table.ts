import { posix } from 'node:path'
import type { FileSystem } from './file-system.js'
import { compareNames } from './order.js'
import type { FsCapabilities, GuardStrength } from './types.js'

/** One mount of a {@link MountFileSystem}: a filesystem, and whether it is mounted read-only. */
export interface MountSpec {
  readonly fs: FileSystem
  /** Every mutation below the mount point is `FS_PERMISSION_DENIED` (default false). */
  readonly readOnly?: boolean | undefined
}

/** One row of a mount table, as {@link MountFileSystem.mounts} lists it. */
export interface MountEntry {
  /** The absolute, normalized mount point (`/`, `/memories`). */
  readonly point: string
  readonly fs: FileSystem
  readonly readOnly: boolean
}

/**
 * A read-only mount whose files a writable mount reaches too, so that they can be edited through it
 * (see `MountFileSystem.overlaps`).
 */
export interface MountOverlap {
  /** The read-only mount's point. */
  readonly readOnly: string
  /** The writable mount's point. */
  readonly writable: string
  /**
   * `certain`: one filesystem mounted at both points, or two stores on this machine's disk; `possible`:
   * stores that may be one (two mounts of one server or bucket, or a pair the caller says may share a store).
   */
  readonly certainty: 'certain' | 'possible'
  /** `holds`: the writable root holds the read-only one; `inside`: it lies below it, mounted elsewhere than where the read-only mount shows it. */
  readonly reach: 'holds' | 'inside'
  /** The two roots as compared: process paths, or the stores' URLs. */
  readonly readOnlyRoot: string
  readonly writableRoot: string
}

/**
 * How a writable mount reaches a read-only one's files, by their mount points and roots (`below(parent,
 * child)`: the segments of `child` below `parent`, `[]` for the same root, undefined when not below):
 * - `holds` when the read-only root is the writable one or lies below it: its files are reachable through
 *   the writable mount, by a link or a spelling the read-only mount point does not shadow;
 * - `inside` when the writable root lies below the read-only one and is not mounted exactly where the
 *   read-only mount shows it (there it would be a writable window that shadows that directory; anywhere
 *   else the same files are read-only at one path and writable at another);
 * - undefined otherwise.
 */
export function readOnlyReach(
  readOnly: { readonly point: string; readonly root: string },
  writable: { readonly point: string; readonly root: string },
  below: (parent: string, child: string) => readonly string[] | undefined,
): 'holds' | 'inside' | undefined {
  if (below(writable.root, readOnly.root) !== undefined) return 'holds'
  const rest = below(readOnly.root, writable.root)
  if (rest === undefined) return undefined
  return posix.join(readOnly.point, ...rest) === writable.point ? undefined : 'inside'
}

/** Validates a mount table and returns its rows sorted by point (code-point order); `/` is required. */
export function parseMounts(mounts: Readonly<Record<string, FileSystem | MountSpec>>): MountEntry[] {
  if (typeof mounts !== 'object' || mounts === null) throw new TypeError('mounts must be an object of mount point → filesystem')
  const rows: MountEntry[] = []
  const seen = new Set<string>()
  for (const [point, value] of Object.entries(mounts)) {
    assertMountPoint(point)
    if (seen.has(point)) throw new TypeError(`mount point "${point}" is given twice`)
    seen.add(point)
    rows.push({ point, ...mountSpec(point, value) })
  }
  if (!seen.has('/')) throw new TypeError('a mount table needs a filesystem mounted at "/"')
  // One filesystem has one root: mounted read-only at one point and writable at another, its files are both.
  for (const ro of rows.filter((row) => row.readOnly)) {
    const rw = rows.find((row) => !row.readOnly && row.fs === ro.fs)
    if (rw !== undefined) throw new TypeError(`mount "${ro.point}" is read-only, but its filesystem is mounted writable at "${rw.point}" too`)
  }
  return rows.sort((a, b) => compareNames(a.point, b.point))
}

function assertMountPoint(point: string): void {
  if (point.includes('\0') || !point.isWellFormed()) throw new TypeError(`mount point "${point.replaceAll('\0', '\\0')}" holds a NUL or a lone surrogate`)
  const normalized = point === '/' || (point.startsWith('/') && !point.endsWith('/') && posix.normalize(point) === point)
  if (!normalized) throw new TypeError(`mount point "${point}" must be an absolute, normalized POSIX path ("/", "/memories")`)
}

function mountSpec(point: string, value: FileSystem | MountSpec): { fs: FileSystem; readOnly: boolean } {
  const spec = isFileSystem(value) ? { fs: value } : (value as Partial<MountSpec> | null)
  if (spec === null || typeof spec !== 'object' || !isFileSystem(spec.fs)) throw new TypeError(`mount "${point}" needs a FileSystem (or { fs, readOnly })`)
  if (spec.readOnly !== undefined && typeof spec.readOnly !== 'boolean') throw new TypeError(`readOnly of mount "${point}" must be a boolean`)
  // A store that does not write is a read-only mount wherever it is mounted.
  return { fs: spec.fs, readOnly: spec.readOnly === true || spec.fs.capabilities.readOnly === true }
}

function isFileSystem(value: unknown): value is FileSystem {
  const fs = value as Partial<Record<keyof FileSystem, unknown>> | null
  return typeof fs === 'object' && fs !== null && typeof fs.resolve === 'function' && typeof fs.contains === 'function' && typeof fs.capabilities === 'object'
}

/** The normalized mount-space cwd (`/` by default); a NUL or a lone surrogate is a TypeError. */
export function mountCwd(cwd: string | undefined): string {
  if (cwd === undefined) return '/'
  if (typeof cwd !== 'string' || cwd.includes('\0') || !cwd.isWellFormed()) throw new TypeError('cwd must be a path without NUL or lone surrogates')
  return posix.resolve('/', cwd)
}

/** True when `child` is `parent` or lies below it, by whole segments (`/mem` does not hold `/memories`). */
export function lexicallyWithin(parent: string, child: string): boolean {
  return parent === '/' || child === parent || child.startsWith(`${parent}/`)
}

/** The index of the row holding `abs` (a normalized absolute path): the longest whole-segment prefix. */
export function routeIndex(rows: readonly MountEntry[], abs: string): number {
  let best = 0
  rows.forEach((row, i) => {
    if (lexicallyWithin(row.point, abs) && row.point.length >= (rows[best]?.point.length ?? 0)) best = i
  })
  return best
}

/** `abs` relative to the mount point `point` (`''` for the point itself). */
export function restOf(point: string, abs: string): string {
  return point === '/' ? abs.slice(1) : abs.slice(point.length + 1)
}

/** `dir/name` in mount space. */
export function childOf(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`
}

/** A URL naming `displayPath` in mount space: `seamfs-mount:/a%20b/c`, each segment percent-encoded. */
export function mountUrl(displayPath: string): string {
  return `seamfs-mount:${displayPath.split('/').map(encodeURIComponent).join('/')}`
}

const weaker = (strengths: readonly GuardStrength[]): GuardStrength =>
  strengths.includes('process') ? 'process' : strengths.includes('seamfs') ? 'seamfs' : 'atomic'

/**
 * The weakest guarantee over all mounts: booleans AND, a guard `process` if any is, `rename` absent if any
 * lacks it (else `copy` if any copies), `createDirectory` likewise (`marker` if any), `versionSource` the
 * common one or else `content-hash`, `listTree` `native` only when every store lists its trees at once. How the table writes (the guards, `remove`, `rename`,
 * `createDirectory`) is over the stores that write: a read-only one (`readOnly`) refuses every mutation
 * anyway; the table is `readOnly` only when every store is.
 */
export function weakestCapabilities(all: readonly FsCapabilities[]): FsCapabilities {
  const every = (flag: (c: FsCapabilities) => boolean | undefined): boolean => all.every((c) => flag(c) === true)
  // How the table writes is decided by the stores that write: a read-only one refuses every mutation anyway.
  const writing = all.some((c) => c.readOnly !== true) ? all.filter((c) => c.readOnly !== true) : all
  const everyWriter = (flag: (c: FsCapabilities) => boolean | undefined): boolean => writing.every((c) => flag(c) === true)
  const sources = new Set(all.map((c) => c.versionSource))
  const [source] = sources
  const caps: { -readonly [K in keyof FsCapabilities]: FsCapabilities[K] } = {
    symlinks: every((c) => c.symlinks),
    permissions: every((c) => c.permissions),
    processPath: every((c) => c.processPath),
    createIfAbsent: weaker(writing.map((c) => c.createIfAbsent)),
    replaceIfVersion: weaker(writing.map((c) => c.replaceIfVersion)),
    versionSource: sources.size === 1 && source !== undefined ? source : 'content-hash',
    newlineInNames: every((c) => c.newlineInNames),
    emptyDirectories: every((c) => c.emptyDirectories),
    remove: everyWriter((c) => c.remove),
    removeIfVersion: weaker(writing.map((c) => c.removeIfVersion ?? c.replaceIfVersion)),
    renameDirectories: everyWriter((c) => c.renameDirectories),
    mtime: every((c) => c.mtime),
  }
  if (writing.every((c) => c.rename !== undefined)) caps.rename = writing.some((c) => c.rename === 'copy') ? 'copy' : 'atomic'
  if (writing.every((c) => c.createDirectory !== undefined)) caps.createDirectory = writing.some((c) => c.createDirectory === 'marker') ? 'marker' : 'native'
  caps.listTree = all.every((c) => c.listTree === 'native') ? 'native' : 'walk'
  if (all.every((c) => c.readOnly === true)) caps.readOnly = true
  return Object.freeze(caps)
}
