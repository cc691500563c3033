export {
  FsError,
  FS_ERROR_CODES,
  abortedError,
  isAbortError,
  isFsError,
  throwIfAborted,
  type FsErrorCode,
  type FsErrorOptions,
  type FsVerb,
} from './errors.js'
export { FileSystem } from './file-system.js'
export {
  FsTargetKey,
  FsVersion,
  type Branded,
  type EditOptions,
  type FsCapabilities,
  type FsDirEntry,
  type FsEditOutcome,
  type FsEditRequest,
  type FsInfo,
  type FsPathInfo,
  type FsTarget,
  type FsWriteIntent,
  type FsWriteOutcome,
  type GuardStrength,
  type ResolveOptions,
  type SignalOptions,
  type WriteOptions,
} from './types.js'
export {
  BINARY_SAMPLE_BYTES,
  LINE_ENDING_SAMPLE_CHARS,
  TextChunkDecoder,
  UTF8_BOM,
  applyLineEnding,
  decodeText,
  decodeTextOrNull,
  decodeTextStream,
  detectLineEnding,
  encodeText,
  encodeWriteContent,
  hasNulInSample,
  hasUtf8Bom,
  normalizeLf,
  type LineEnding,
  type TextVerb,
} from './text.js'
export { applyLiteralEdit, assertEditRequest, editTextBytes, findLiteral, type ByteEditResult, type LiteralEditResult } from './edit.js'
export { KeyedMutex } from './mutex.js'
export { compareNames } from './order.js'
export {
  ObservationPolicy,
  type Observation,
  type ObservationSnapshot,
  type PolicyOwner,
} from './policy.js'
export { SANDBOX_MODES, SandboxedFileSystem, type SandboxMode, type SandboxOptions } from './sandbox.js'
export { assertCwdText, assertPathText, assertWriteIntent } from './paths.js'
export { errorCodeOf, processWide, translateError, type ErrorRow } from './translate.js'
