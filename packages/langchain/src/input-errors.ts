import { ToolMessage } from '@langchain/core/messages'
import { DynamicStructuredTool, ToolInputParsingException, type DynamicStructuredToolInput } from '@langchain/core/tools'
import { FileSystem, FsError, type FsCapabilities, type FsTarget } from '@seamfs/core'
import { createFileTools, type FileTool, type ToolResult, type ToolsConfig } from '@seamfs/tools'
import { FileToolError } from './errors.js'

type CallArgs = Parameters<DynamicStructuredTool['call']>

/**
 * A filesystem that never touches a store: every hook refuses. The probe tools run over it, so
 * asking a seamfs tool why it rejects some arguments can never read or change anything, even
 * where its parser accepted what LangChain's validator refused.
 */
class ProbeFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities

  constructor(capabilities: FsCapabilities) {
    super()
    this.capabilities = capabilities
  }

  override fileUrl(): never {
    throw refused()
  }
  override contains(): never {
    throw refused()
  }
  protected override resolvePath(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override statTarget(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override lstatPath(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override loadBytes(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override openBytes(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override listEntries(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override publishBytes(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override updateBytes(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override removeTarget(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override renameTarget(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override makeDirectory(): Promise<never> {
    return Promise.reject(refused())
  }
  protected override processPathOf(target: FsTarget): never {
    throw FsError.unsupported('resolve', target.displayPath, 'probe')
  }
}

function refused(): FsError {
  return FsError.unsupported('resolve', '', 'probe: no store behind the argument check')
}

/** Options of the probe tools: the real tools' capabilities, `cwd` and caps, so the checks (and their words) are the same. */
export interface ProbeOptions {
  readonly capabilities: FsCapabilities
  readonly cwd?: string | undefined
  readonly config?: Partial<ToolsConfig> | undefined
}

/** The seamfs tools over a {@link ProbeFileSystem}, keyed by name: same schemas, same parser, no store. */
export function probeTools(options: ProbeOptions): Readonly<Record<string, FileTool>> {
  const tools = createFileTools({ fs: new ProbeFileSystem(options.capabilities), cwd: options.cwd, config: options.config, sandbox: false })
  return Object.fromEntries(tools.map((t) => [t.name, t]))
}

/**
 * The seamfs rejection of arguments LangChain's validator refused: the probe tool's own input
 * error (`Error: unknown argument "filepath" (allowed: …)`), or, where the seamfs parser would
 * have accepted them (the probe got past it, so the validators disagree), a generic input error.
 */
export async function inputRejection(probe: FileTool, args: unknown): Promise<ToolResult> {
  const result = await probe.execute(args)
  // An input error is the one failure without a code (`failure` in @seamfs/tools); anything else means the parser let the arguments through.
  if (result.isError && result.code === undefined) return result
  return { text: `Error: the arguments do not match the input schema of the ${probe.name} tool`, isError: true }
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
  readonly #probe: FileTool

  constructor(fields: DynamicStructuredToolInput, probe: FileTool) {
    super(fields)
    this.#probe = probe
  }

  override async call(...[arg, configArg, tags]: CallArgs): ReturnType<DynamicStructuredTool['call']> {
    try {
      return await super.call(arg, configArg, tags)
    } catch (err) {
      if (!(err instanceof ToolInputParsingException)) throw err
      const call = toolCallOf(arg, configArg)
      const result = await inputRejection(this.#probe, call.args)
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
