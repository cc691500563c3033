/**
 * `@seamfs/tools`: the model-facing file tools over any seamfs backend, as
 * plain tool objects, in a list or keyed by name. No runtime dependency beyond
 * `@seamfs/core` and a glob matcher: the MCP server is `@seamfs/mcp`, and the
 * framework adapters are `@seamfs/ai-sdk`, `@seamfs/langchain` and `@seamfs/deepagents`.
 */
import { registerLoadedPackage } from '@seamfs/core'

export { createFileTools, createFileToolsByName, type FileToolName, type FileToolsByName, type FileToolsOptions } from './file-tools.js'
export { parseArgs, type ArgsCheck, type FileToolArgs, type ParseArgsOptions } from './parse-args.js'
export { DEFAULT_CONFIG } from './config.js'
export { MAX_ERROR_CHARS, toolFailure, ToolInputError } from './results.js'
export { deadlineSignal } from './deadline.js'
export { briefedDescription, FileToolError, hostPolicy, isFileToolError, type HostToolsOptions } from './host.js'
export type { ReadLine } from './read-window.js'
export type { ReadArgs, ReadValue } from './read-tool.js'
export type { EditArgs, EditValue } from './edit-tool.js'
export type { WriteArgs, WriteValue } from './write-tool.js'
export type { DeleteArgs, DeleteValue } from './delete-tool.js'
export type { MoveArgs, MoveValue } from './move-tool.js'
export type { CreateDirectoryArgs, CreateDirectoryValue } from './directory-tool.js'
export type { ListArgs, ListEntry, ListValue } from './list-tool.js'
export type { ReadFilesArgs, ReadFilesItem, ReadFilesValue } from './read-files-tool.js'
export type { TreeArgs, TreeDirState, TreeEntry, TreeValue } from './tree-tool.js'
export type { InfoArgs, InfoValue, LinkInfo } from './info-tool.js'
export type { ListRootsArgs, ListRootsValue, RootInfo } from './roots-tool.js'
export type { GlobArgs, GlobValue } from './glob-tool.js'
export type { GrepArgs, GrepMatch, GrepValue } from './grep-tool.js'
export { sniffImage, type ImageMimeType } from './image.js'
export { diffOutcome, type ChangeDiff } from './diff.js'
export {
  OverlayFileSystem,
  type OverlayBase,
  type OverlayChange,
  type OverlayCommitReport,
  type OverlayOptions,
  type OverlaySelection,
  type OverlayStep,
  type OverlayUpper,
} from './overlay.js'
export type { FileTool, JsonSchema, StructuredOutput, ToolAnnotations, ToolContext, ToolImage, ToolResult, ToolsConfig } from './types.js'
export { ObservationPolicy } from '@seamfs/core'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)
