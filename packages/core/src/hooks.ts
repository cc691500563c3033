import { constants as bufferConstants } from 'node:buffer'
import type { ErrorRow } from './translate.js'
import type { FsDirEntry, FsInfo, FsPathInfo, FsRemoveOutcome, FsRenameOutcome, FsTarget, FsTreeEntry, FsVersion, FsWriteIntent } from './types.js'

/** The default of {@link FsLimits.maxTextBytes}: 256 MiB. */
export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024
/** The default of {@link FsLimits.maxRemoveEntries}: 10,000. */
export const MAX_REMOVE_ENTRIES = 10_000
/** The default of {@link FsLimits.diffBasisMaxBytes}: 10 MiB. */
export const DEFAULT_DIFF_BASIS_MAX_BYTES = 10 * 1024 * 1024

/**
 * The most bytes whose text can be one JavaScript string: a UTF-8 byte yields
 * at most one UTF-16 unit, so a file of at most this many bytes always fits.
 */
export const STRING_CEILING_BYTES = bufferConstants.MAX_STRING_LENGTH

/** Size limits every backend takes in its options; core enforces them. */
export interface FsLimits {
  /**
   * The largest file `readText` and `editText` hold as one string, in bytes
   * (default 256 MiB). Never above what one JavaScript string can hold
   * (`buffer.constants.MAX_STRING_LENGTH`), whatever is configured.
   */
  readonly maxTextBytes?: number | undefined
  /** The largest previous content decoded into a write outcome's `before` (default 10 MiB; 0 turns it off; capped like `maxTextBytes`). */
  readonly diffBasisMaxBytes?: number | undefined
  /** The most entries a recursive `remove` takes down (default 10,000); a larger tree is refused before anything is removed. */
  readonly maxRemoveEntries?: number | undefined
}

/** The chunks `openBytes` returns: an async iterable, or a plain one where the bytes are at hand. */
export type ByteChunks = AsyncIterable<Uint8Array> | Iterable<Uint8Array>

/**
 * What a hook answers: its value, or a promise of it. A backend whose store is at hand (memory)
 * answers synchronously and spares every call a turn of the event loop; core awaits either.
 * A hook that fails may throw or reject: core treats both alike.
 */
export type Awaitable<T> = T | Promise<T>

/**
 * What {@link FileSystem.openTarget} answers: a regular file's metadata and its chunks, from one look
 * at the store where it can (an S3 GET's headers and body; a descriptor's fstat and reads).
 * `info.version` never names newer content than `chunks` yields.
 */
export interface OpenedFile {
  readonly info: FsInfo
  readonly chunks: ByteChunks
}

/** What {@link FileSystem.loadBytes} is asked for. */
export interface ReadRequest {
  readonly signal: AbortSignal | undefined
  /** A file larger than this is `FsError.tooLarge`, refused before its bytes are read. */
  readonly maxBytes: number
  /**
   * True when core only decodes the bytes and drops them (`readText`): they never reach a caller,
   * so a backend may return a copy in Node's shared `Buffer` pool (a view of a larger
   * `ArrayBuffer`). False or absent (`readBytes`): the bytes are handed to the caller and must be
   * an array of their own. Either way they are a copy: the store's own buffer is never returned.
   */
  readonly transient?: boolean | undefined
}

/** What {@link FileSystem.publishBytes} is asked for. */
export interface WriteRequest {
  readonly expected: FsWriteIntent | undefined
  readonly signal: AbortSignal | undefined
  /**
   * Return the previous bytes only when there are at most this many (else `null`). 0 (`writeBytes`, or
   * `writeText` with `before: false`) means nobody wants them: do not fetch the previous content at all.
   */
  readonly beforeMaxBytes: number
  /**
   * A layer's verdict still under way (a fence re-resolving the target), sent with the write so that
   * both take one round trip: the hook may begin with what no reader sees (reads, its own staging and
   * lock entries under reserved names), but awaits it before it publishes anything, and fails with its
   * rejection, nothing published. Only a backend whose `takesFence()` is true is handed one (a layer
   * awaits it for the others).
   */
  readonly fence?: Promise<void> | undefined
  /**
   * Core's, optional to call: a store that fetches the previous bytes before it publishes may hand
   * them here as soon as it has them (the very bytes its result's `before` will be, never changed
   * afterwards), so that core finds what changed while the store's I/O runs: a diff's compare and
   * line count would otherwise follow the file after the write. Called at most once, synchronously.
   */
  readonly onBefore?: ((before: Uint8Array) => void) | undefined
}

/** What {@link FileSystem.publishBytes} reports; core turns it into the {@link FsWriteOutcome}. */
export interface WriteResult {
  /** True when no file was there before. */
  readonly created: boolean
  /** The version the write left. */
  readonly version: FsVersion
  /** The previous bytes (the diff basis), or `null` when none, unknown or above `beforeMaxBytes`. */
  readonly before: Uint8Array | null
}

/** What {@link FileSystem.updateBytes} is asked for. */
export interface UpdateRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly signal: AbortSignal | undefined
  /** A file larger than this is `FsError.tooLarge`, refused before its bytes are read. */
  readonly maxBytes: number
  /** As {@link WriteRequest.fence}: awaited before anything is published. */
  readonly fence?: Promise<void> | undefined
}

/** What {@link FileSystem.removeTarget} is asked for. */
export interface RemoveRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly recursive: boolean
  readonly signal: AbortSignal | undefined
  /** A recursive remove of a tree with more entries than this is `FS_TOO_LARGE`, before anything is removed. */
  readonly maxEntries: number
}

/** What {@link FileSystem.listSubtree} is asked for. */
export interface TreeRequest {
  readonly signal: AbortSignal | undefined
  /** Names of directories to list but never enter, compared exactly. */
  readonly prune: ReadonlySet<string>
}

/** What {@link FileSystem.listSubtree} answers: pages of entries, async or at hand. */
export type TreePages = AsyncIterable<FsTreeEntry[]> | Iterable<FsTreeEntry[]>

/** What {@link FileSystem.renameTarget} is asked for. */
export interface RenameRequest {
  readonly expected: { readonly version: FsVersion } | undefined
  readonly overwrite: boolean | { readonly version: FsVersion }
  readonly signal: AbortSignal | undefined
}

/** The protected hooks of a filesystem as plain functions (see `FileSystem.hooksOf`). */
export interface FileSystemHooks {
  resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget>
  statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined>
  lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined>
  loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array>
  openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks>
  openTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<OpenedFile>
  listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]>
  listSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages>
  publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult>
  updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion>
  removeTarget(target: FsTarget, request: RemoveRequest): Awaitable<FsRemoveOutcome>
  renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome>
  prepareRename(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<readonly [FsTarget, FsTarget]>
  renameInPlace(target: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome>
  rootTarget(signal: AbortSignal | undefined): Awaitable<FsTarget>
  makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Awaitable<boolean>
  takesFence(): boolean
  errorRow(err: unknown): ErrorRow | undefined
}

/** The limits a `FileSystem` enforces, from its options: defaults filled in, the text limits capped at what one string holds. */
export function limitsOf(limits: Readonly<FsLimits>): Required<{ readonly [K in keyof FsLimits]: number }> {
  return {
    maxTextBytes: Math.min(limitOption(limits.maxTextBytes, DEFAULT_MAX_TEXT_BYTES, 'maxTextBytes'), STRING_CEILING_BYTES),
    diffBasisMaxBytes: Math.min(limitOption(limits.diffBasisMaxBytes, DEFAULT_DIFF_BASIS_MAX_BYTES, 'diffBasisMaxBytes'), STRING_CEILING_BYTES),
    maxRemoveEntries: limitOption(limits.maxRemoveEntries, MAX_REMOVE_ENTRIES, 'maxRemoveEntries'),
  }
}

/** A limit option: `fallback` when absent; a `RangeError` unless it is a non-negative integer. */
function limitOption(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`)
  return value
}
