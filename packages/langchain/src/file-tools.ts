import type { PolicyOwner } from '@seamfs/core'
import { ToolMessage } from '@langchain/core/messages'
import { tool, type DynamicStructuredTool, type ToolRunnableConfig } from '@langchain/core/tools'
import { briefedDescription, createFileTools, FileToolError, hostPolicy, type FileTool, type HostToolsOptions, type ToolResult } from '@seamfs/tools'
import { FileStructuredTool, inputRejection, type InputRejection } from './input-errors.js'

/** Options of {@link fileTools}: `@seamfs/tools`' host options (read-before-write on unless `policy: false`, `session`). */
export type FileToolsOptions = HostToolsOptions

/** One seamfs tool as a LangChain structured tool over its JSON Schema. */
export type FileLangChainTool = DynamicStructuredTool

/**
 * The seamfs tools keyed by name; `Object.values(tools)` is the array `createAgent`,
 * `bindTools` and `ToolNode` take. `create_directory`, `move` and `delete` are there only where
 * the backend's capabilities allow them.
 */
export type FileLangChainTools = {
  readonly list: FileLangChainTool
  readonly read: FileLangChainTool
  readonly write: FileLangChainTool
  readonly edit: FileLangChainTool
  readonly glob: FileLangChainTool
  readonly grep: FileLangChainTool
  readonly read_files: FileLangChainTool
  readonly tree: FileLangChainTool
  readonly info: FileLangChainTool
  readonly list_roots: FileLangChainTool
  readonly create_directory?: FileLangChainTool
  readonly move?: FileLangChainTool
  readonly delete?: FileLangChainTool
}

/** What the model sees: the text, and after it the image of a `read` of a picture (a standard image block). */
type ModelContent = string | Array<{ type: 'text'; text: string } | { type: 'image'; mimeType: string; data: string }>

function modelContent(result: ToolResult): ModelContent {
  if (result.image === undefined) return result.text
  return [
    { type: 'text', text: result.text },
    { type: 'image', mimeType: result.image.mimeType, data: result.image.data },
  ]
}

/**
 * The seamfs file tools (`@seamfs/tools`' `createFileTools`) as LangChain structured tools
 * (`tool()` from `@langchain/core/tools`, the tool's JSON Schema as `schema`).
 *
 * Invoked with a tool call (as `ToolNode`, `createAgent` and deepagents do), a tool answers a
 * `ToolMessage` whose `content` is the tool's text (plus an image block for a `read` of a
 * picture), whose `artifact` is the whole seamfs `ToolResult` for the application, and whose
 * `status` is `'error'` for a failure: the model reads the failure's text unchanged, and no
 * error is thrown through the agent. Invoked with bare arguments, a tool returns the content
 * and throws a {@link FileToolError} for a failure. Arguments that break the JSON Schema (which
 * `@langchain/core` refuses before the tool runs) fail the same way, with the seamfs tool's input
 * error (`parseArgs` of `@seamfs/tools`, the tool's own check): nothing is read or changed.
 *
 * Each tool's description carries its usage guidance (`prompt`), unless `includePrompt: false`.
 * The run's `signal` is the call's signal. One policy session per `fileTools` call (or
 * `options.session`): make one set per agent run.
 */
export function fileTools(options: FileToolsOptions): FileLangChainTools {
  const tools: Record<string, FileLangChainTool> = {}
  for (const fileTool of createFileTools({
    fs: options.fs,
    policy: hostPolicy(options.policy),
    cwd: options.cwd,
    config: options.config,
    sandbox: options.sandbox,
  })) {
    tools[fileTool.name] = langChainTool(
      fileTool,
      inputRejection(fileTool.name, options.config),
      options.session,
      briefedDescription(fileTool, options.includePrompt),
    )
  }
  return tools as unknown as FileLangChainTools
}

function langChainTool(fileTool: FileTool, reject: InputRejection, session: PolicyOwner | undefined, description: string): FileLangChainTool {
  const run = async (input: unknown, config: ToolRunnableConfig): Promise<ToolMessage | ModelContent> => {
    const result = await fileTool.execute(input, { session, signal: config.signal })
    const toolCallId = config.toolCall?.id
    if (toolCallId === undefined) {
      if (result.isError) throw new FileToolError(result)
      return modelContent(result)
    }
    const status = result.isError ? 'error' : 'success'
    return new ToolMessage({ content: modelContent(result), artifact: result, tool_call_id: toolCallId, name: fileTool.name, status })
  }
  const fields = {
    name: fileTool.name,
    description,
    schema: fileTool.inputSchema,
    metadata: { annotations: fileTool.annotations },
  }
  // `tool()` builds the func (abort, callbacks' context); the subclass answers schema violations in the seamfs tool's words.
  const { func } = tool(run, fields) as DynamicStructuredTool
  return new FileStructuredTool({ ...fields, func }, reject)
}
