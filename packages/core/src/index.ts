/**
 * `@seamfs/core` for consumers: the contract, its errors and types, the
 * read-before-write policy and the sandbox. Backend authors import
 * `@seamfs/core/backend`, which adds the building blocks of a backend.
 */
export { FsError, FS_ERROR_CODES, isFsError, type FsErrorCode, type FsErrorDetails, type FsVerb } from './errors.js'
export { FileSystem } from './file-system.js'
export { FINAL_METHODS, overriddenMethods, overrideMessage } from './final-methods.js'
export { changedLines, type ChangedLinesOptions, type FsChangedLines } from './changed-lines.js'
export { MAX_REMOVE_ENTRIES, type FsLimits } from './hooks.js'
export type {
  EditOptions,
  FsBytesWriteOutcome,
  FsCapabilities,
  FsCreateDirectoryOutcome,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsOpenFile,
  FsPathInfo,
  FsRemoveOutcome,
  FsRenameOutcome,
  FsTarget,
  FsTargetKey,
  FsTreeEntry,
  FsVersion,
  FsWriteIntent,
  FsWriteOutcome,
  GuardStrength,
  ListTreeOptions,
  ReadBytesOptions,
  RemoveOptions,
  RenameOptions,
  ResolveOptions,
  SignalOptions,
  WriteOptions,
} from './types.js'
export { ObservationPolicy, type Observation, type ObservationSnapshot, type PolicyOwner } from './policy.js'
export { DEFAULT_PROTECTED_NAMES, DEFAULT_RESOLVE_MEMORY_MS, SANDBOX_MODES, SandboxedFileSystem, type SandboxMode, type SandboxOptions } from './sandbox.js'
export { AUDIT_LOG_KEEP, AUDIT_LOG_MAX_BYTES, AuditLog, auditLogFiles, type AuditLine, type AuditLogOptions } from './audit-log.js'
export {
  actingAs,
  currentActor,
  EventedFileSystem,
  type EventedOptions,
  type FsActor,
  type FsChangeEvent,
  type FsEvent,
  type FsEventListener,
  type FsEventTarget,
  type FsFailureEvent,
  trackActors,
} from './events.js'
export { EXECUTED_NAMES } from './executes.js'
export { toolCallWrapperOf, WRAP_TOOL_CALL, type ToolCall, type ToolCallAnswer, type ToolCallWrapper } from './tool-calls.js'
export { loadedCodePaths, registerLoadedPackage } from './loaded-code.js'
export { MountFileSystem, type MountOptions, type OverlapOptions } from './mounts.js'
export type { MountEntry, MountOverlap, MountSpec } from './mount-table.js'
