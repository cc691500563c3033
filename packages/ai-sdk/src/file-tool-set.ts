import { jsonSchema, tool, type Tool, type ToolExecutionOptions } from 'ai'
import type { PolicyOwner } from '@seamfs/core'
import { briefedDescription, createFileTools, hostPolicy, type FileTool, type HostToolsOptions, type ToolResult } from '@seamfs/tools'
import { FileToolError } from './errors.js'
import { toModelOutput } from './model-output.js'

/** Options of {@link fileToolSet}: `@seamfs/tools`' host options (read-before-write on unless `policy: false`, `session`). */
export type FileToolSetOptions = HostToolsOptions

/** A tool's arguments, as the model sends them; `execute` checks them against the tool's JSON Schema. */
export type FileToolInput = Record<string, unknown>

/** One seamfs tool as an AI SDK tool: `execute` resolves to the full `ToolResult` (the model sees its text only). */
export type FileAiTool = Tool<FileToolInput, ToolResult>

/**
 * The seamfs tools keyed by name, as `generateText({ tools })` and `streamText({ tools })` take
 * them. `create_directory`, `move` and `delete` are there only where the backend's capabilities
 * allow them. (A type alias, not an interface: the SDK's `ToolSet` is a record, and only an
 * alias gets the implicit index signature that assignment needs.)
 */
export type FileToolSet = {
  readonly list: FileAiTool
  readonly read: FileAiTool
  readonly write: FileAiTool
  readonly edit: FileAiTool
  readonly glob: FileAiTool
  readonly grep: FileAiTool
  readonly read_files: FileAiTool
  readonly tree: FileAiTool
  readonly info: FileAiTool
  readonly list_roots: FileAiTool
  readonly create_directory?: FileAiTool
  readonly move?: FileAiTool
  readonly delete?: FileAiTool
}

/**
 * The seamfs file tools (`@seamfs/tools`' `createFileTools`) as an AI SDK tool set, built
 * with the SDK's `tool()` and `jsonSchema()`.
 *
 * - The model sees the tool's text only (`toModelOutput`), plus the image of a `read` of a
 *   picture as media; `execute` resolves to the whole `ToolResult` for the application
 *   (`steps[].toolResults[].output`).
 * - A failure rejects with a {@link FileToolError} whose message is the tool's text: the SDK
 *   records a `tool-error` part (the application reads `error.code`) and sends the model
 *   `error-text` with that text.
 * - Each tool's description carries its usage guidance (`prompt`), unless `includePrompt: false`.
 * - The SDK's `abortSignal` is the call's `signal`: an aborted run fails the call with `FS_ABORTED`.
 * - One policy session per tool set (or `options.session`): make one tool set per agent run.
 */
export function fileToolSet(options: FileToolSetOptions): FileToolSet {
  const tools = createFileTools({ fs: options.fs, policy: hostPolicy(options.policy), cwd: options.cwd, config: options.config, sandbox: options.sandbox })
  const set: Record<string, FileAiTool> = {}
  for (const fileTool of tools) set[fileTool.name] = aiTool(fileTool, options.session, briefedDescription(fileTool, options.includePrompt))
  return set as unknown as FileToolSet
}

function aiTool(fileTool: FileTool, session: PolicyOwner | undefined, description: string): FileAiTool {
  return tool<FileToolInput, ToolResult>({
    title: fileTool.annotations.title,
    description,
    inputSchema: jsonSchema<FileToolInput>(fileTool.inputSchema),
    execute: async (input: FileToolInput, { abortSignal }: ToolExecutionOptions): Promise<ToolResult> => {
      const result = await fileTool.execute(input, { session, signal: abortSignal })
      if (result.isError) throw new FileToolError(result)
      return result
    },
    toModelOutput,
  })
}
