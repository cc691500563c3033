/**
 * `@seamfs/tools`: the model-facing file tools over any seamfs backend, as
 * plain tool objects. The MCP server is the `@seamfs/tools/mcp` subpath, so a
 * host that does not speak MCP never loads the SDK.
 */
import { ObservationPolicy, type FileSystem } from '@seamfs/core'
import { resolveConfig } from './config.js'
import { deleteTool } from './delete-tool.js'
import { createDirectoryTool } from './directory-tool.js'
import { editTool } from './edit-tool.js'
import { readTool } from './file-tools.js'
import { globTool } from './glob-tool.js'
import { grepTool } from './grep-tool.js'
import { listTool } from './list-tool.js'
import { moveTool } from './move-tool.js'
import { writeTool } from './write-tool.js'
import type { FileTool, ToolsConfig } from './types.js'

export { DEFAULT_CONFIG } from './config.js'
export type { ReadLine } from './read-window.js'
export type { ReadValue } from './file-tools.js'
export type { EditValue } from './edit-tool.js'
export type { WriteValue } from './write-tool.js'
export type { DeleteValue } from './delete-tool.js'
export type { MoveValue } from './move-tool.js'
export type { CreateDirectoryValue } from './directory-tool.js'
export { sniffImage, type ImageMimeType } from './image.js'
export type { ListValue } from './list-tool.js'
export type { GlobValue } from './glob-tool.js'
export type { GrepMatch, GrepValue } from './grep-tool.js'
export type { FileTool, JsonSchema, ToolAnnotations, ToolContext, ToolImage, ToolResult, ToolsConfig } from './types.js'

/** Options of {@link createFileTools}. */
export interface FileToolsOptions {
  readonly fs: FileSystem
  /** The read-before-write policy; omit to run against the bare backend (unconditional writes and edits). */
  readonly policy?: ObservationPolicy | undefined
  /** Base of relative paths (a call's `context.cwd` overrides it); default the backend's own cwd. */
  readonly cwd?: string | undefined
  readonly config?: Partial<ToolsConfig> | undefined
}

/**
 * The model-facing tools over any backend: plain objects (name, description,
 * JSON Schema, annotations, `execute`) any agent framework can host.
 * `execute(args, { session, signal, cwd })` never throws: failures are
 * `{ isError: true, text: 'Error: …', code }`.
 *
 * `execute` accepts exactly what the tool's `inputSchema` declares: an
 * unknown key, a missing required key, a wrong type or a value out of bounds
 * is an input error naming the key (unknown keys are listed with the allowed
 * names). Optional keys are declared `[type, 'null']`: `null` means absent,
 * as hosts in strict mode send it.
 *
 * The tools are `list`, `read`, `write`, `edit`, `glob`, `grep`, then the ones the backend's
 * capabilities allow: `create_directory` (`capabilities.createDirectory`), `move`
 * (`capabilities.rename`) and `delete` (`capabilities.remove`). A tool the backend cannot
 * serve is left out, so the model is never offered what would only answer `FS_UNSUPPORTED`.
 *
 * Each call returns a new set of tools with its own default session: a call
 * whose context names no `session` records and reads its observations there,
 * so `execute(args)` read → edit works with a policy and no session at all.
 * Two `createFileTools` calls never share it; an explicit `context.session`
 * always wins.
 */
export function createFileTools(options: FileToolsOptions): FileTool[] {
  const session = Object.freeze({ tools: 'default session' })
  const deps = { fs: options.fs, policy: options.policy, session, cwd: options.cwd, config: resolveConfig(options.config) }
  const tools: FileTool[] = [listTool(deps), readTool(deps), writeTool(deps), editTool(deps), globTool(deps), grepTool(deps)] as FileTool[]
  // A tool the backend cannot serve is not offered, rather than answering FS_UNSUPPORTED on every call.
  const { capabilities } = options.fs
  if (capabilities.createDirectory !== undefined) tools.push(createDirectoryTool(deps))
  if (capabilities.rename !== undefined) tools.push(moveTool(deps))
  if (capabilities.remove === true) tools.push(deleteTool(deps))
  return tools
}

export { ObservationPolicy }
