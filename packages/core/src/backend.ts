/**
 * `@seamfs/core/backend`: what a backend author needs on top of the consumer
 * entry. Extend `FileSystem` and implement its protected hooks (or extend
 * `FileSystemLayer` to wrap another filesystem); build failures with the
 * `FsError` named constructors; map foreign errors with one `errorRow` table.
 * `FileSystem` runs the literal edit; `editTextBytesSliced` is here for a dry run of it.
 * `decodeText` is, for a reader that must cap the bytes itself and still apply `readText`'s rules.
 */
export * from './index.js'
export { abortedError, isAbortError, throwIfAborted, type FsErrorOptions } from './errors.js'
export {
  DEFAULT_DIFF_BASIS_MAX_BYTES,
  DEFAULT_MAX_TEXT_BYTES,
  MAX_REMOVE_ENTRIES,
  type ByteChunks,
  type FileSystemHooks,
  type Awaitable,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type RenameRequest,
  type TreePages,
  type TreeRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from './hooks.js'
export { FileSystemLayer } from './layer.js'
/** For a backend that reads an edit's bytes into a buffer it uses again: core keeps none of them past `transform`. */
export { lendBytes } from './lent-bytes.js'
export { FsTargetKey, FsVersion, type Branded } from './types.js'
export { KeyedMutex, type MutexWait } from './mutex.js'
export {
  DEFAULT_LEASE_MS,
  DEFAULT_LOCK_WAIT_MS,
  formatLeaseRecord,
  HOST_ID,
  LeaseLocks,
  MAX_LEASE_MS,
  parseLeaseRecord,
  pidIsAlive,
  staleReason,
  THIS_HOST,
  type LeaseEntry,
  type LeaseHold,
  type LockContext,
  type LeaseOptions,
  type LeaseRecord,
  type LeaseStore,
} from './lease-lock.js'
export { compareNames } from './order.js'
/** For a signal many calls wait on at once (the tools' shared deadlines): one abort listener for all of them. */
export { sharedAbortController } from './abort-wait.js'
/** For readers of raw UTF-8 chunks (the read tool's byte window): where a chunk cuts a character, and `streamText`'s checks without the decoding. */
export { incompleteTail, TextChunkValidator } from './text.js'
/** How many `\n` bytes lie in a range of bytes, counted at memory speed (a WebAssembly SIMD loop where there is one). */
export { countLineEnds } from './line-ends.js'
/** `readText`'s decoding rules on bytes already read: NUL sample, strict UTF-8, BOM dropped; else `FS_NOT_TEXT`. */
export { decodeText } from './text.js'
/** The same rules without the error (`null` where `readText` would refuse), and `readText`'s LF normalization: for diffs of stored bytes. */
export { decodeTextOrNull, normalizeLf } from './text.js'
/**
 * The literal edit of `editText` on bytes already read, run a slice at a time (giving the event
 * loop turns, checking the signal) with `editText`'s bounds: for a dry run that must say what an
 * edit would do, and refuse what it would refuse.
 */
export { editTextBytesSliced, MAX_EDIT_MATCHES, MAX_EDIT_SCAN_BYTES, type ByteEditResult } from './edit.js'
/** For a reader of small files: the bytes of an open file the store handed over whole at the open, without a chunk's promise turns. */
export { takeHeldBytes } from './streams.js'
export { checkGuard, isNormalizedAbsolute } from './paths.js'
export { errorCodeOf, processWide, translateError, type ErrorRow } from './translate.js'
export { ERRNO_ROWS, errnoRow } from './errno.js'
export * from './backend-config.js'
