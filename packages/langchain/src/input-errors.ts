import { ToolMessage } from '@langchain/core/messages'
import { DynamicStructuredTool, ToolInputParsingException, type DynamicStructuredToolInput } from '@langchain/core/tools'
import { parseArgs, type ToolResult, type ToolsConfig } from '@seamfs/tools'
import { FileToolError } from './errors.js'

type CallArgs = Parameters<DynamicStructuredTool['call']>

/** Answers arguments LangChain's validator refused: the failed result the model is shown. */
export type InputRejection = (args: unknown) => ToolResult

/**
 * The seamfs rejection of arguments LangChain's validator refused, for the tool named `toolName`
 * with `config`: the tool's own input error, from `parseArgs` (the check its `execute` runs, so
 * nothing is read or changed): `Error: unknown argument "filepath" (allowed: …)`. Where the seamfs
 * check accepts them (the validators disagree), a generic input error.
 */
export function inputRejection(toolName: string, config: Partial<ToolsConfig> | undefined): InputRejection {
  return (args) => {
    const check = parseArgs(toolName, args, { config })
    if (!check.ok) return check.result
    return { text: `Error: the arguments do not match the input schema of the ${toolName} tool`, isError: true }
  }
}

/**
 * A `DynamicStructuredTool` whose schema violations reach the model in the seamfs tool's words:
 * `@langchain/core` validates the arguments against the JSON Schema before the tool runs and throws
 * a `ToolInputParsingException` (in its own words; agents add a stack trace). This tool answers
 * instead as for any other failure: a `ToolMessage` with `status: 'error'` and the seamfs text when
 * invoked with a tool call, a {@link FileToolError} with bare arguments. The schema the model is
 * shown is unchanged.
 */
export class FileStructuredTool extends DynamicStructuredTool {
  readonly #reject: InputRejection

  constructor(fields: DynamicStructuredToolInput, reject: InputRejection) {
    super(fields)
    this.#reject = reject
  }

  override async call(...[arg, configArg, tags]: CallArgs): ReturnType<DynamicStructuredTool['call']> {
    try {
      return await super.call(arg, configArg, tags)
    } catch (err) {
      if (!(err instanceof ToolInputParsingException)) throw err
      const call = toolCallOf(arg, configArg)
      const result = this.#reject(call.args)
      if (call.id === undefined) throw new FileToolError(result)
      return new ToolMessage({ content: result.text, artifact: result, tool_call_id: call.id, name: this.name, status: 'error' })
    }
  }
}

/** The arguments and tool call id being answered: from the argument itself (`call(toolCall)`), or the tool call `invoke` puts in the config. */
function toolCallOf(arg: unknown, config: unknown): { readonly args: unknown; readonly id: string | undefined } {
  if (isToolCall(arg)) return { args: arg.args, id: typeof arg.id === 'string' ? arg.id : undefined }
  const id = typeof config === 'object' && config !== null ? (config as { toolCall?: { id?: unknown } | null }).toolCall?.id : undefined
  return { args: arg, id: typeof id === 'string' ? id : undefined }
}

function isToolCall(value: unknown): value is { readonly type: 'tool_call'; readonly args: unknown; readonly id?: unknown } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'tool_call'
}
